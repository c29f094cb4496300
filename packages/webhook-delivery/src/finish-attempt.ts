import { finishAttemptRows } from "@gen/db";
import { DeliveryStatus } from "@gen/domain";
import { afterAttempt, attemptRecord, type AfterAttempt } from "./after-attempt.ts";
import type { AttemptResult } from "./attempt-result.ts";
import type { OpenAttempt } from "./open-attempt.ts";
import { gatheredStatement } from "./gathered-statement.ts";
import { scheduleNextAttempt } from "./schedule-next-attempt.ts";
import type { TransitionDeps } from "./transition-deps.ts";

const finishRow = gatheredStatement(finishAttemptRows);

/**
 * Records how an attempt ended, on its log row and on the delivery in one statement, then enqueues
 * the attempt that follows if it is a retry. Conditional on the log row still being open: when a
 * worker that was presumed dead reports after its attempt was already recorded as `attempt_lost`
 * (or the other way round), the second report changes nothing and null is returned, so only one of
 * them schedules the next attempt. Finishes of concurrent attempts share one statement
 * (gathered-statement.ts), each row with these conditions.
 *
 * A delivery that was ever delivered stays `delivered` when a later (manual) attempt fails, and
 * keeps its `delivered_at`; scheduled attempts only run before the first 2xx, so for them this is
 * the plain schedule.
 */
export async function finishAttempt(
  deps: Omit<TransitionDeps, "metrics">,
  open: OpenAttempt,
  result: AttemptResult,
  finishedAt: Date,
): Promise<AfterAttempt | null> {
  const next = afterAttempt(open, result, finishedAt, deps.config);
  const status = await finishRow(deps.db, attemptRecord(open, result, finishedAt, next));
  if (status === undefined) return null;
  if (next.kind === "retry") {
    await scheduleNextAttempt(deps, open.taskId, next);
    return next;
  }
  return { kind: status === DeliveryStatus.Delivered ? DeliveryStatus.Delivered : DeliveryStatus.Failed };
}
