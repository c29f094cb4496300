import type { Database } from "@gen/db";
import { newDeliveryId } from "@gen/ids";
import type { AttemptNo } from "./delivery-schedule.ts";

export interface ClaimedAttempt {
  id: string;
  startedAt: Date;
}

/**
 * Claims attempt `attempt` in one statement: the delivery moves to `in_progress` with
 * `attempts = attempt` and `last_attempt_at = now`, and the attempt log gets its row with a new
 * whd_ id. The update is conditional on the state the previous step left (attempt 1: `pending`;
 * later: `in_progress`, waiting between attempts), so of two workers holding the same job only one
 * gets a row back; the unique (task_id, attempt_no) backs that up.
 */
export async function claimAttempt(db: Database, taskId: string, attempt: AttemptNo, now: Date): Promise<ClaimedAttempt | null> {
  const id = newDeliveryId();
  const fromStatus = attempt === 1 ? "pending" : "in_progress";
  const rows = await db.$queryRaw<Array<{ id: string }>>`
    WITH claimed AS (
      UPDATE webhook_deliveries
         SET status = 'in_progress', attempts = ${attempt}, last_attempt_at = ${now}, next_attempt_at = NULL, updated_at = ${now}
       WHERE task_id = ${taskId} AND attempts = ${attempt - 1} AND status = ${fromStatus}
         AND (${attempt} = 1 OR next_attempt_at IS NOT NULL)
      RETURNING task_id
    )
    INSERT INTO webhook_attempts (id, task_id, attempt_no, started_at)
    SELECT ${id}, task_id, ${attempt}, ${now} FROM claimed
    RETURNING id`;
  return rows.length === 1 ? { id, startedAt: now } : null;
}
