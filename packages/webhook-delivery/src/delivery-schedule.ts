import type { Config } from "@gen/config";
import { SCHEDULED_ATTEMPTS, type AttemptNo } from "@gen/domain";

export type Schedule = Pick<Config, "webhookRetryDelayMs" | "webhookFinalAttemptMs" | "webhookTimeoutMs">;

/** docs/api.md#webhook-delivery-schedule: attempt 3 must finish within this of its due time. */
export const FINAL_ATTEMPT_WINDOW_MS = 60_000;

/** Whether `attempt` is one of the contract's scheduled attempts (an operator's are additions). */
export function isScheduledAttempt(attempt: number): attempt is AttemptNo {
  return Number.isInteger(attempt) && attempt >= 1 && attempt <= SCHEDULED_ATTEMPTS;
}

/**
 * When the attempt after `failed` is due: attempt 2 a retry delay after attempt 1 failed;
 * attempt 3 a fixed time after the task finished, or at once if attempt 2 failed after that.
 * Null after the last scheduled attempt: the delivery is `failed`.
 */
export function nextAttemptDueAt(failed: AttemptNo, failedAt: Date, taskFinishedAt: Date, schedule: Schedule): Date | null {
  if (failed === 1) return new Date(failedAt.getTime() + schedule.webhookRetryDelayMs);
  if (failed === 2) return new Date(Math.max(taskFinishedAt.getTime() + schedule.webhookFinalAttemptMs, failedAt.getTime()));
  return null;
}

/**
 * The moment attempt `attempt` must have finished by. Attempts 1 and 2 must finish before attempt 3
 * is due (task finished + final delay): attempt 2 is only ever due after attempt 1 has ended, so
 * attempt 1 cannot run into it, and the bound that is left for both is attempt 3. Attempt 3 has
 * 60 s from its due time.
 */
export function attemptWindowEndsAt(attempt: AttemptNo, dueAt: Date, taskFinishedAt: Date, schedule: Schedule): Date {
  if (attempt === SCHEDULED_ATTEMPTS) return new Date(dueAt.getTime() + FINAL_ATTEMPT_WINDOW_MS);
  return new Date(taskFinishedAt.getTime() + schedule.webhookFinalAttemptMs);
}

/**
 * A manual attempt (an operator's redelivery from the console) is due when it was requested and
 * gets the final attempt's window from then: a request stuck behind a backlog or an outage for
 * longer is recorded `stale_claim` rather than sent long after the operator looked away.
 */
export function manualAttemptWindowEndsAt(requestedAt: Date): Date {
  return new Date(requestedAt.getTime() + FINAL_ATTEMPT_WINDOW_MS);
}

/** A claim at `now` can still finish inside the window only if the whole timeout fits. */
export function fitsWindow(now: Date, windowEndsAt: Date, schedule: Schedule): boolean {
  return now.getTime() <= lastStartIn(windowEndsAt, schedule);
}

/** The last moment (epoch ms) an attempt may start and still finish inside its window. */
export function lastStartIn(windowEndsAt: Date, schedule: Schedule): number {
  return windowEndsAt.getTime() - schedule.webhookTimeoutMs;
}
