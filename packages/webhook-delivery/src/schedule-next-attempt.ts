import type { AfterAttempt } from "./after-attempt.ts";
import { enqueueWebhookAttempt } from "./enqueue-webhook-attempt.ts";
import type { TransitionDeps } from "./transition-deps.ts";

/**
 * Enqueues the attempt a recorded result calls for, as a delayed job due at its stored
 * `next_attempt_at`. A Redis failure here is logged, not thrown: the due time is committed, and the
 * reconciler enqueues a due attempt that has no job.
 */
export async function scheduleNextAttempt(
  deps: Pick<TransitionDeps, "webhookQueue" | "logger" | "now">,
  taskId: string,
  next: Extract<AfterAttempt, { kind: "retry" }>,
): Promise<void> {
  try {
    await enqueueWebhookAttempt(deps.webhookQueue, taskId, next.attempt, next.dueAt.getTime() - deps.now().getTime());
  } catch (error) {
    deps.logger.error("could not enqueue the next webhook attempt; the reconciler will", { task_id: taskId, attempt: next.attempt, err: error });
  }
}
