import type { Task } from "@gen/db";
import { enqueueWebhookAttempt } from "@gen/queues";
import type { GenerationDeps } from "./generation-deps.ts";

/**
 * After a task is terminal, schedule delivery attempt 1. A failure here is logged, not thrown:
 * the task result is already committed, and the delivery reconciler enqueues pending deliveries
 * of terminal tasks that have no job.
 */
export async function handOffWebhook(deps: Pick<GenerationDeps, "webhookQueue" | "handOffWebhook" | "logger">, task: Task): Promise<void> {
  if (task.webhookUrl === null) return;
  try {
    if (deps.handOffWebhook && task.finishedAt) await deps.handOffWebhook(task.id, task.webhookUrl, task.finishedAt);
    else await enqueueWebhookAttempt(deps.webhookQueue, task.id, 1, 0);
  } catch (error) {
    deps.logger.error("webhook hand-off failed; the reconciler will enqueue it", { task_id: task.id, err: error });
  }
}
