import type { Database } from "@gen/db";
import type { AttemptNo } from "./delivery-schedule.ts";

/** One delivery as the handler sees it for attempt `attempt`, read in one round trip. */
export interface DeliveryState {
  taskId: string;
  url: string;
  status: string;
  attempts: number;
  nextAttemptAt: Date | null;
  taskStatus: string;
  taskFinishedAt: Date | null;
  /** The attempt log row of `attempt`, if that attempt was ever claimed. */
  attemptId: string | null;
  attemptStartedAt: Date | null;
  attemptFinishedAt: Date | null;
}

export async function loadDeliveryState(db: Database, taskId: string, attempt: AttemptNo): Promise<DeliveryState | null> {
  const rows = await db.$queryRaw<DeliveryState[]>`
    SELECT d.task_id AS "taskId", d.url, d.status, d.attempts, d.next_attempt_at AS "nextAttemptAt",
           t.status AS "taskStatus", t.finished_at AS "taskFinishedAt",
           a.id AS "attemptId", a.started_at AS "attemptStartedAt", a.finished_at AS "attemptFinishedAt"
      FROM webhook_deliveries d
      JOIN tasks t ON t.id = d.task_id
      LEFT JOIN webhook_attempts a ON a.task_id = d.task_id AND a.attempt_no = ${attempt}
     WHERE d.task_id = ${taskId}`;
  return rows[0] ?? null;
}
