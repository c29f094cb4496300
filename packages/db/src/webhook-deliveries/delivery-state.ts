import type { Row } from "../camel-row.ts";
import type { Database } from "../create-database.ts";
import { runBatched } from "./batched-statement.ts";

type Delivery = Row<"webhook_deliveries">;
type Attempt = Row<"webhook_attempts">;

/**
 * One delivery as the handler sees it for attempt `attempt`: the delivery row, its task's status,
 * end and owner, and the attempt log row of `attempt` if that attempt was ever claimed (the `attempt*`
 * fields are null otherwise; `attemptRequestedBy` is non-null for a manual one).
 */
export interface DeliveryState extends Pick<Delivery, "taskId" | "url" | "status" | "attempts" | "nextAttemptAt" | "redeliveryRequestedBy"> {
  taskStatus: Row<"tasks">["status"];
  taskFinishedAt: Row<"tasks">["finishedAt"];
  /** The task's owner: the customer its receivers' tickets and timeouts are also counted under. */
  taskUserId: Row<"tasks">["userId"];
  attemptId: Attempt["id"] | null;
  attemptStartedAt: Attempt["startedAt"] | null;
  attemptFinishedAt: Attempt["finishedAt"];
  attemptRequestedBy: Attempt["requestedBy"];
}

// A delivery whose task row is gone has no state (the inner join): nothing is claimed for it.
const STATES = `
SELECT (r.ord - 1)::int AS ord, d.task_id AS "taskId", d.url, d.status, d.attempts, d.next_attempt_at AS "nextAttemptAt",
       d.redelivery_requested_by AS "redeliveryRequestedBy", t.status AS "taskStatus", t.finished_at AS "taskFinishedAt",
       t.user_id AS "taskUserId",
       a.id AS "attemptId", a.started_at AS "attemptStartedAt", a.finished_at AS "attemptFinishedAt", a.requested_by AS "attemptRequestedBy"
FROM (SELECT * FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS u(task_id, attempt, ord) LIMIT $3) AS r
JOIN webhook_deliveries d ON d.task_id = r.task_id
JOIN tasks t ON t.id = d.task_id
LEFT JOIN webhook_attempts a ON a.task_id = d.task_id AND a.attempt_no = r.attempt`;

/** The state of each (task, attempt) pair, in one round trip: one answer per pair, in order (undefined: no delivery). */
export async function loadDeliveryStates(db: Database, items: readonly { taskId: string; attempt: number }[]): Promise<(DeliveryState | undefined)[]> {
  return runBatched<DeliveryState & { ord: number }>(
    db,
    STATES,
    [items.map((item) => item.taskId), items.map((item) => item.attempt), items.length],
    items.length,
  );
}
