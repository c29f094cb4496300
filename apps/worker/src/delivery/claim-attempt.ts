import type { Database } from "@gen/db";
import { newDeliveryId } from "@gen/ids";

export interface ClaimedAttempt {
  id: string;
  startedAt: Date;
  /** The operator who asked for this attempt (a manual redelivery); null for a scheduled one. */
  requestedBy: string | null;
}

/**
 * Claims attempt `attempt` in one statement: the delivery moves to `in_progress` with
 * `attempts = attempt` and `last_attempt_at = now`, and the attempt log gets its row with a new
 * whd_ id. The update is conditional on the state the previous step left (attempt 1: `pending`;
 * later: `in_progress`, waiting for a scheduled or a manual attempt), so of two workers holding the
 * same job only one gets a row back; the unique (task_id, attempt_no) backs that up. Whether the
 * attempt is manual is copied from the delivery row inside the same statement, so it cannot
 * disagree with what was claimed.
 */
export async function claimAttempt(db: Database, taskId: string, attempt: number, now: Date): Promise<ClaimedAttempt | null> {
  const id = newDeliveryId();
  const fromStatus = attempt === 1 ? "pending" : "in_progress";
  const rows = await db.$sql.rows<{ requestedBy: string | null }>`
    WITH claimed AS (
      UPDATE webhook_deliveries
         SET status = 'in_progress', attempts = ${attempt}, last_attempt_at = ${now}, next_attempt_at = NULL, updated_at = ${now}
       WHERE task_id = ${taskId} AND attempts = ${attempt - 1} AND status = ${fromStatus}
         AND (${attempt} = 1 OR next_attempt_at IS NOT NULL)
      RETURNING task_id, redelivery_requested_by
    )
    INSERT INTO webhook_attempts (id, task_id, attempt_no, started_at, requested_by)
    SELECT ${id}, task_id, ${attempt}, ${now}, redelivery_requested_by FROM claimed
    RETURNING requested_by AS "requestedBy"`;
  const row = rows[0];
  return row ? { id, startedAt: now, requestedBy: row.requestedBy } : null;
}
