import { WorkerError } from "@gen/domain";
import { recordWebhookAttempt } from "@gen/metrics";
import { workerFailure } from "./attempt-result.ts";
import { finishAttempt } from "./finish-attempt.ts";
import type { OpenAttempt } from "./open-attempt.ts";
import type { TransitionDeps } from "./transition-deps.ts";

/**
 * An attempt that was claimed but never reported: its worker died (or lost Redis) somewhere
 * between claim and record. It is not sent again, because it may well have reached the receiver;
 * it is closed as `attempt_lost` and the schedule goes on. Returns whether this call recorded it.
 */
export async function recordLostAttempt(deps: TransitionDeps, open: OpenAttempt, foundBy: string): Promise<boolean> {
  const next = await finishAttempt(deps, open, workerFailure(WorkerError.AttemptLost), deps.now());
  if (next === null) return false;
  recordWebhookAttempt(deps.metrics, WorkerError.AttemptLost);
  deps.logger.warn("webhook attempt lost", {
    task_id: open.taskId,
    attempt: open.attempt,
    manual: open.manual,
    delivery_id: open.attemptId,
    found_by: foundBy,
    next: next.kind,
  });
  return true;
}
