import { enqueueWebhookAttempt } from "@gen/queues";
import type { DeliveryDeps } from "./delivery-deps.ts";
import type { AfterAttempt } from "./finish-attempt.ts";

/**
 * Enqueues the attempt a recorded result calls for, as a delayed job due at its stored
 * `next_attempt_at`. A Redis failure here is logged, not thrown: the due time is committed, and the
 * reconciler enqueues a due attempt that has no job.
 */
export async function scheduleNextAttempt(deps: Pick<DeliveryDeps, "webhookQueue" | "logger" | "now">, taskId: string, next: AfterAttempt | null): Promise<void> {
  if (next?.kind !== "retry") return;
  try {
    await enqueueWebhookAttempt(deps.webhookQueue, taskId, next.attempt, next.dueAt.getTime() - deps.now().getTime());
  } catch (error) {
    deps.logger.error("could not enqueue the next webhook attempt; the reconciler will", { task_id: taskId, attempt: next.attempt, err: error });
  }
}
