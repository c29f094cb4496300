import type { Database } from "@gen/db";
import { outcomeLabel, type AttemptResult } from "./attempt-result.ts";
import { nextAttemptDueAt, type AttemptNo, type Schedule } from "./delivery-schedule.ts";

export interface OpenAttempt {
  taskId: string;
  attempt: AttemptNo;
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
 */
export async function finishAttempt(db: Database, open: OpenAttempt, result: AttemptResult, finishedAt: Date, schedule: Schedule): Promise<AfterAttempt | null> {
  const next = afterAttempt(open, result, finishedAt, schedule);
  const status = next.kind === "retry" ? "in_progress" : next.kind;
  const lastError = result.ok ? null : result.lastError;
  const responseStatus = result.status;
  const durationMs = Math.max(0, finishedAt.getTime() - open.startedAt.getTime());
  const rows = await db.$queryRaw<Array<{ task_id: string }>>`
    WITH closed AS (
      UPDATE webhook_attempts
         SET finished_at = ${finishedAt}, outcome = ${outcomeLabel(result)}, response_status = ${responseStatus}::int, duration_ms = ${durationMs}
       WHERE id = ${open.attemptId} AND finished_at IS NULL
      RETURNING task_id
    )
    UPDATE webhook_deliveries d
       SET status = ${status}, response_status = ${responseStatus}::int, last_error = ${lastError}::text,
           delivered_at = ${next.kind === "delivered" ? finishedAt : null}::timestamptz,
           next_attempt_at = ${next.kind === "retry" ? next.dueAt : null}::timestamptz, updated_at = ${finishedAt}
      FROM closed
     WHERE d.task_id = closed.task_id AND d.attempts = ${open.attempt} AND d.status = 'in_progress'
    RETURNING d.task_id`;
  return rows.length === 1 ? next : null;
}

function afterAttempt(open: OpenAttempt, result: AttemptResult, finishedAt: Date, schedule: Schedule): AfterAttempt {
  if (result.ok) return { kind: "delivered" };
  const dueAt = nextAttemptDueAt(open.attempt, finishedAt, open.taskFinishedAt, schedule);
  if (dueAt === null || open.attempt === 3) return { kind: "failed" };
  return { kind: "retry", attempt: (open.attempt + 1) as AttemptNo, dueAt };
}
