import type { Database } from "../create-database.ts";
import { compiledOnce } from "../compiled-once.ts";

/**
 * One delivery as the handler sees it for attempt `attempt`, in one round trip: the delivery row,
 * its task's status and end, and the attempt log row of `attempt` if that attempt was ever claimed
 * (the `attempt*` fields are null otherwise; `attemptRequestedBy` is non-null for a manual one).
 */
export async function loadDeliveryState(db: Database, taskId: string, attempt: number) {
  const [state] = await stateStatement(db, "state", taskId, attempt);
  return state;
}

const stateStatement = compiledOnce((k, _shape, taskId: string, attempt: number) =>
  k
    .selectFrom("webhook_deliveries as d")
    .innerJoin("tasks as t", "t.id", "d.task_id")
    .leftJoin("webhook_attempts as a", (join) => join.onRef("a.task_id", "=", "d.task_id").on("a.attempt_no", "=", attempt))
    .select([
      "d.task_id as taskId",
      "d.url",
      "d.status",
      "d.attempts",
      "d.next_attempt_at as nextAttemptAt",
      "d.redelivery_requested_by as redeliveryRequestedBy",
      "t.status as taskStatus",
      "t.finished_at as taskFinishedAt",
      "a.id as attemptId",
      "a.started_at as attemptStartedAt",
      "a.finished_at as attemptFinishedAt",
      "a.requested_by as attemptRequestedBy",
    ])
    .where("d.task_id", "=", taskId),
);

export type DeliveryState = NonNullable<Awaited<ReturnType<typeof loadDeliveryState>>>;
