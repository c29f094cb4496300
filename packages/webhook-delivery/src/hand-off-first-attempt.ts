import type { Queue } from "bullmq";
import type { Logger } from "@gen/logger";
import type { WebhookJobData } from "@gen/queues";
import { enqueueWebhookAttempt } from "./enqueue-webhook-attempt.ts";

export interface HandOffDeps {
  webhookQueue: Queue<WebhookJobData>;
  logger: Logger;
}

/**
 * After a task's terminal state is committed (finished by the worker or cancelled in the gateway),
 * its `pending` delivery gets attempt 1's job, to run now. A failure here is logged, not thrown: the
 * task result is already committed, and the delivery reconciler enqueues pending deliveries of
 * terminal tasks that have no job.
 */
export async function handOffWebhook(deps: HandOffDeps, task: { id: string; webhookUrl: string | null }): Promise<void> {
  if (task.webhookUrl === null) return;
  try {
    await enqueueWebhookAttempt(deps.webhookQueue, task.id, 1, 0);
  } catch (error) {
    deps.logger.error("webhook hand-off failed; the reconciler will enqueue it", { task_id: task.id, err: error });
  }
}
