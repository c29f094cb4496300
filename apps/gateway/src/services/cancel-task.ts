import { isTerminalTask, TaskStatus } from "@gen/domain";
import { findTask, findVisibleTask, type Task } from "@gen/db";
import { ApiError, Err, Wf } from "@gen/errors";
import { recordTaskFinished } from "@gen/metrics";
import { settleTask } from "@gen/ledger";
import { wakeGenerationJob } from "@gen/queues";
import { handOffWebhook } from "@gen/webhook-delivery";
import type { GatewayDeps } from "./gateway-deps.ts";

/**
 * A queued or running task becomes `failed` with 80008 and its reservation is refunded, in the
 * same exactly-once settlement the worker uses. Its parked generation job is woken, so the worker
 * cancels the upstream job and gives back its upstream slot now, not at its next poll (which
 * may be a safety poll minutes away). A terminal task is returned unchanged.
 */
export async function cancelTask(deps: GatewayDeps, userId: string, taskId: string): Promise<Task> {
  const task = await findVisibleTask(deps.db, taskId, userId);
  if (!task) throw new ApiError(Err.TaskNotFound);
  if (isTerminalTask(task.status)) return task;
  const settled = await settleTask(deps.db, task, { status: TaskStatus.Failed, code: Wf.Canceled, charge: 0 });
  if (!settled) return (await findTask(deps.db, task.id)) ?? task;
  recordTaskFinished(deps.metrics, settled);
  // Best effort: the job runs at its next poll anyway.
  await wakeGenerationJob(deps.generationQueue, settled.id).catch((error: unknown) =>
    deps.logger.warn("could not wake a cancelled task's generation job", { task_id: settled.id, err: error }),
  );
  await handOffWebhook(deps, settled);
  return settled;
}
