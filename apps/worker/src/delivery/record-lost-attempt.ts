import { recordWebhookAttempt } from "@gen/metrics";
import { workerFailure } from "./attempt-result.ts";
import type { DeliveryDeps } from "./delivery-deps.ts";
import { finishAttempt, type OpenAttempt } from "./finish-attempt.ts";
import { scheduleNextAttempt } from "./schedule-next-attempt.ts";

/**
 * An attempt that was claimed but never reported: its worker died (or lost Redis) somewhere
 * between claim and record. It is not sent again, because it may well have reached the receiver;
 * it is closed as `attempt_lost` and the schedule goes on. Returns whether this call recorded it.
 */
export async function recordLostAttempt(deps: Pick<DeliveryDeps, "db" | "config" | "logger" | "webhookQueue" | "now" | "metrics">, open: OpenAttempt, foundBy: string): Promise<boolean> {
  const now = deps.now();
  const next = await finishAttempt(deps.db, open, workerFailure("attempt_lost"), now, deps.config);
  if (next === null) return false;
  recordWebhookAttempt(deps.metrics, "attempt_lost");
  deps.logger.warn("webhook attempt lost", { task_id: open.taskId, attempt: open.attempt, manual: open.manual, delivery_id: open.attemptId, found_by: foundBy, next: next.kind });
  await scheduleNextAttempt(deps, open.taskId, next);
  return true;
}
