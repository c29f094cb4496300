import type { AttemptRecord } from "@gen/db";
import { DeliveryStatus, type AttemptNo } from "@gen/domain";
import { outcomeLabel, type AttemptResult } from "./attempt-result.ts";
import { isScheduledAttempt, nextAttemptDueAt, type Schedule } from "./delivery-schedule.ts";
import type { OpenAttempt } from "./open-attempt.ts";

/** What the delivery does next once an attempt is recorded. */
export type AfterAttempt =
  { kind: typeof DeliveryStatus.Delivered } | { kind: typeof DeliveryStatus.Failed } | { kind: "retry"; attempt: AttemptNo; dueAt: Date };

const DELIVERED: AfterAttempt = { kind: DeliveryStatus.Delivered };
const FAILED: AfterAttempt = { kind: DeliveryStatus.Failed };

/**
 * What a result means for the delivery (pure): a 2xx delivers it; a failure of scheduled attempt 1
 * or 2 waits for the next one at its due time; the last scheduled attempt, and any operator's
 * attempt, ends it `failed` (the contract's three attempts are the automatic ones; an operator's
 * attempt is an addition, followed by no retry).
 */
export function afterAttempt(
  open: Pick<OpenAttempt, "attempt" | "manual" | "taskFinishedAt">,
  result: AttemptResult,
  finishedAt: Date,
  schedule: Schedule,
): AfterAttempt {
  if (result.ok) return DELIVERED;
  const following = open.attempt + 1;
  if (open.manual || !isScheduledAttempt(open.attempt) || !isScheduledAttempt(following)) return FAILED;
  const dueAt = nextAttemptDueAt(open.attempt, finishedAt, open.taskFinishedAt, schedule);
  if (dueAt === null) return FAILED;
  return { kind: "retry", attempt: following, dueAt };
}

/** The rows' new values for a recorded attempt (pure): the attempt log's and the delivery's. */
export function attemptRecord(open: OpenAttempt, result: AttemptResult, finishedAt: Date, next: AfterAttempt): AttemptRecord {
  return {
    attempt: open.attempt,
    attemptId: open.attemptId,
    finishedAt,
    outcome: outcomeLabel(result),
    responseStatus: result.status,
    durationMs: Math.max(0, finishedAt.getTime() - open.startedAt.getTime()),
    // `failed` keeps a delivery `delivered` if an earlier attempt was (the statement checks the row).
    status: next.kind === "retry" ? DeliveryStatus.InProgress : next.kind,
    lastError: result.ok ? null : result.lastError,
    nextAttemptAt: next.kind === "retry" ? next.dueAt : null,
  };
}
