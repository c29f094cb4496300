import type { Task } from "@gen/db";
import { ApiError } from "@gen/errors";
import { recordTaskFinished } from "@gen/metrics";
import { settleTask } from "@gen/settlement";
import { handOffWebhook } from "@gen/webhook-delivery";
import type { GatewayDeps } from "./gateway-deps.ts";

/**
 * A queued or running task becomes `failed` with 80008 and its reservation is refunded, in the
 * same exactly-once settlement the worker uses. The worker running it sees the terminal state on
 * its next poll and cancels the upstream job. A terminal task is returned unchanged.
 */
export async function cancelTask(deps: GatewayDeps, userId: string, taskId: string): Promise<Task> {
  const task = await deps.db.task.findFirst({ where: { id: taskId, userId, discardedAt: null } });
  if (!task) throw new ApiError(40001);
  if (task.status === "completed" || task.status === "failed") return task;
  const settled = await settleTask(deps.db, task.id, { status: "failed", code: 80008, charge: 0 });
  if (!settled) return deps.db.task.findUniqueOrThrow({ where: { id: task.id } });
  recordTaskFinished(deps.metrics, settled);
  await handOffWebhook(deps, settled);
  return settled;
}
