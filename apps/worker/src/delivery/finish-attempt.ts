import type { Database } from "@gen/db";
import { outcomeLabel, type AttemptResult } from "./attempt-result.ts";
import { nextAttemptDueAt, type AttemptNo, type Schedule } from "./delivery-schedule.ts";

export interface OpenAttempt {
  taskId: string;
  attempt: number;
  /** An operator's redelivery: no retry follows it, whatever its number. */
  manual: boolean;
  attemptId: string;
  startedAt: Date;
  taskFinishedAt: Date;
}

/** What the delivery does next once an attempt is recorded. */
export type AfterAttempt = { kind: "delivered" } | { kind: "failed" } | { kind: "retry"; attempt: AttemptNo; dueAt: Date };

/**
 * Records how an attempt ended, on its log row and on the delivery, in one statement. Conditional
 * on the log row still being open: when a worker that was presumed dead reports after its attempt
 * was already recorded as `attempt_lost` (or the other way round), the second report changes
 * nothing and null is returned, so only one of them schedules the next attempt.
 *
 * A delivery that was ever delivered stays `delivered` when a later (manual) attempt fails, and
 * keeps its `delivered_at`; a 2xx sets `delivered_at` to that attempt's end. Scheduled attempts
 * only run before the first 2xx, so for them this is the plain schedule.
 */
export async function finishAttempt(db: Database, open: OpenAttempt, result: AttemptResult, finishedAt: Date, schedule: Schedule): Promise<AfterAttempt | null> {
  const next = afterAttempt(open, result, finishedAt, schedule);
  const status = next.kind === "retry" ? "in_progress" : next.kind;
  const lastError = result.ok ? null : result.lastError;
  const responseStatus = result.status;
  const durationMs = Math.max(0, finishedAt.getTime() - open.startedAt.getTime());
  const rows = await db.$sql.rows<{ status: string }>`
    WITH closed AS (
      UPDATE webhook_attempts
         SET finished_at = ${finishedAt}, outcome = ${outcomeLabel(result)}, response_status = ${responseStatus}::int, duration_ms = ${durationMs}
       WHERE id = ${open.attemptId} AND finished_at IS NULL
      RETURNING task_id
    )
    UPDATE webhook_deliveries d
       SET status = CASE WHEN ${status}::text = 'failed' AND d.delivered_at IS NOT NULL THEN 'delivered' ELSE ${status}::text END,
           response_status = ${responseStatus}::int, last_error = ${lastError}::text,
           delivered_at = CASE WHEN ${next.kind === "delivered"} THEN ${finishedAt}::timestamptz ELSE d.delivered_at END,
           next_attempt_at = ${next.kind === "retry" ? next.dueAt : null}::timestamptz, redelivery_requested_by = NULL, updated_at = ${finishedAt}
      FROM closed
     WHERE d.task_id = closed.task_id AND d.attempts = ${open.attempt} AND d.status = 'in_progress'
    RETURNING d.status`;
  const row = rows[0];
  if (!row) return null;
  return next.kind === "retry" ? next : { kind: row.status === "delivered" ? "delivered" : "failed" };
}

function afterAttempt(open: OpenAttempt, result: AttemptResult, finishedAt: Date, schedule: Schedule): AfterAttempt {
  if (result.ok) return { kind: "delivered" };
  // The contract's three attempts are the automatic ones; an operator's attempt is an addition.
  if (open.manual || open.attempt >= 3) return { kind: "failed" };
  const dueAt = nextAttemptDueAt(open.attempt as AttemptNo, finishedAt, open.taskFinishedAt, schedule);
  if (dueAt === null) return { kind: "failed" };
  return { kind: "retry", attempt: (open.attempt + 1) as AttemptNo, dueAt };
}
