import { DeliveryStatus } from "@gen/domain";
import type { Database } from "../create-database.ts";

/**
 * A task's delivery and, in the same statement, the attempt that first delivered it: once a webhook
 * is delivered the API shows that attempt (@gen/task-render), whatever an operator's redelivery did
 * since. The lateral read is one probe of the (task_id, attempt_no) index, for delivered ones only.
 * `delivered` is the attempt log's outcome of a 2xx.
 */
export async function readDelivery(db: Database, taskId: string) {
  const row = await db.$kysely
    .selectFrom("webhook_deliveries as w")
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom("webhook_attempts as a")
          .select(["a.attempt_no", "a.started_at", "a.finished_at", "a.response_status"])
          .whereRef("a.task_id", "=", "w.task_id")
          .where("a.outcome", "=", DeliveryStatus.Delivered)
          .orderBy("a.attempt_no")
          .limit(1)
          .as("f"),
      (join) => join.on("w.delivered_at", "is not", null),
    )
    .select([
      "w.task_id as taskId",
      "w.url",
      "w.status",
      "w.attempts",
      "w.response_status as responseStatus",
      "w.last_error as lastError",
      "w.last_attempt_at as lastAttemptAt",
      "w.delivered_at as deliveredAt",
      "w.updated_at as updatedAt",
      "w.next_attempt_at as nextAttemptAt",
      "w.redelivery_requested_by as redeliveryRequestedBy",
      "f.attempt_no as firstNo",
      "f.started_at as firstStartedAt",
      "f.finished_at as firstFinishedAt",
      "f.response_status as firstStatus",
    ])
    .where("w.task_id", "=", taskId)
    .executeTakeFirst();
  if (!row) return null;
  const { firstNo, firstStartedAt, firstFinishedAt, firstStatus, ...delivery } = row;
  const deliveredBy =
    firstNo === null || firstStartedAt === null
      ? null
      : { attemptNo: firstNo, startedAt: firstStartedAt, finishedAt: firstFinishedAt, responseStatus: firstStatus };
  return { ...delivery, deliveredBy };
}

/** A delivery row as the API and the console show it, with the attempt that first delivered it. */
export type DeliveryRecord = NonNullable<Awaited<ReturnType<typeof readDelivery>>>;

/** The attempt-log row of the first attempt answered with a 2xx. */
export type FirstDelivery = NonNullable<DeliveryRecord["deliveredBy"]>;
