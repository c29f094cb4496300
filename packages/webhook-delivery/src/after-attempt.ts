import type { AttemptRecord } from "@gen/db";
import { DeliveryStatus, SCHEDULED_ATTEMPTS, type AttemptNo } from "@gen/domain";
import { outcomeLabel, type AttemptResult } from "./attempt-result.ts";
import { isScheduledAttempt, nextAttemptDueAt, type Schedule } from "./delivery-schedule.ts";
import type { OpenAttempt } from "./open-attempt.ts";

/** What the delivery does next once an attempt is recorded. */
export type AfterAttempt = { kind: "delivered" } | { kind: "failed" } | { kind: "retry"; attempt: AttemptNo; dueAt: Date };

/**
 * What a result means for the delivery (pure): a 2xx delivers it; a failure of scheduled attempt 1
 * or 2 waits for the next one at its due time; the last scheduled attempt, and any operator's
 * attempt, ends it `failed` (the contract's three attempts are the automatic ones; an operator's
 * attempt is an addition, followed by no retry).
 */
export function afterAttempt(open: Pick<OpenAttempt, "attempt" | "manual" | "taskFinishedAt">, result: AttemptResult, finishedAt: Date, schedule: Schedule): AfterAttempt {
  if (result.ok) return { kind: "delivered" };
  if (open.manual || !isScheduledAttempt(open.attempt) || open.attempt >= SCHEDULED_ATTEMPTS) return { kind: "failed" };
  const dueAt = nextAttemptDueAt(open.attempt, finishedAt, open.taskFinishedAt, schedule);
  if (dueAt === null) return { kind: "failed" };
  return { kind: "retry", attempt: (open.attempt + 1) as AttemptNo, dueAt };
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
    status: next.kind === "retry" ? DeliveryStatus.InProgress : next.kind === "delivered" ? DeliveryStatus.Delivered : DeliveryStatus.Failed,
    lastError: result.ok ? null : result.lastError,
    nextAttemptAt: next.kind === "retry" ? next.dueAt : null,
  };
}
