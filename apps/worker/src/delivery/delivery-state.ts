import type { Database } from "@gen/db";

/** One delivery as the handler sees it for attempt `attempt`, read in one round trip. */
export interface DeliveryState {
  taskId: string;
  url: string;
  status: string;
  attempts: number;
  nextAttemptAt: Date | null;
  /** Set while the attempt the delivery waits for is an operator's manual redelivery. */
  redeliveryRequestedBy: string | null;
  taskStatus: string;
  taskFinishedAt: Date | null;
  /** The attempt log row of `attempt`, if that attempt was ever claimed. */
  attemptId: string | null;
  attemptStartedAt: Date | null;
  attemptFinishedAt: Date | null;
  /** Non-null when that attempt was a manual one. */
  attemptRequestedBy: string | null;
}

export async function loadDeliveryState(db: Database, taskId: string, attempt: number): Promise<DeliveryState | null> {
  const rows = await db.$sql.rows<DeliveryState>`
    SELECT d.task_id AS "taskId", d.url, d.status, d.attempts, d.next_attempt_at AS "nextAttemptAt",
           d.redelivery_requested_by AS "redeliveryRequestedBy",
           t.status AS "taskStatus", t.finished_at AS "taskFinishedAt",
           a.id AS "attemptId", a.started_at AS "attemptStartedAt", a.finished_at AS "attemptFinishedAt",
           a.requested_by AS "attemptRequestedBy"
      FROM webhook_deliveries d
      JOIN tasks t ON t.id = d.task_id
      LEFT JOIN webhook_attempts a ON a.task_id = d.task_id AND a.attempt_no = ${attempt}
     WHERE d.task_id = ${taskId}`;
  return rows[0] ?? null;
}
