import { isTerminalTask, TaskStatus } from "@gen/domain";
import { findTask, findVisibleTask, type Task } from "@gen/db";
import { ApiError, Err, Wf } from "@gen/errors";
import { recordTaskFinished } from "@gen/metrics";
import { settleTask } from "@gen/ledger";
import { handOffWebhook } from "@gen/webhook-delivery";
import type { GatewayDeps } from "./gateway-deps.ts";

/**
 * A queued or running task becomes `failed` with 80008 and its reservation is refunded, in the
 * same exactly-once settlement the worker uses. The worker running it sees the terminal state on
 * its next poll and cancels the upstream job. A terminal task is returned unchanged.
 */
export async function cancelTask(deps: GatewayDeps, userId: string, taskId: string): Promise<Task> {
  const task = await findVisibleTask(deps.db, taskId, userId);
  if (!task) throw new ApiError(Err.TaskNotFound);
  if (isTerminalTask(task.status)) return task;
  const settled = await settleTask(deps.db, task, { status: TaskStatus.Failed, code: Wf.Canceled, charge: 0 });
  if (!settled) return (await findTask(deps.db, task.id)) ?? task;
  recordTaskFinished(deps.metrics, settled);
  await handOffWebhook(deps, settled);
  return settled;
}
