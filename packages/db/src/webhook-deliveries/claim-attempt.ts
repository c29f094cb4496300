import { DeliveryStatus } from "@gen/domain";
import type { Database } from "../create-database.ts";

/**
 * Claims attempt `attempt` in one statement: the delivery moves to `in_progress` with
 * `attempts = attempt` and `last_attempt_at = now`, and the attempt log gets its row `id`. The
 * update is conditional on the state the previous step left (attempt 1: `pending`; later:
 * `in_progress` waiting for a scheduled or a manual attempt), so of two workers holding the same
 * job only one gets a row back; the unique (task_id, attempt_no) backs that up. Whether the attempt
 * is manual is copied from the delivery row inside the same statement, so it cannot disagree with
 * what was claimed. Returns the operator who asked for it (null: a scheduled attempt), or
 * undefined when nothing was claimed.
 */
export async function claimAttemptRow(db: Database, taskId: string, attempt: number, id: string, now: Date) {
  const row = await db.$kysely
    .with("claimed", (qb) =>
      qb
        .updateTable("webhook_deliveries")
        .set({ status: DeliveryStatus.InProgress, attempts: attempt, last_attempt_at: now, next_attempt_at: null, updated_at: now })
        .where("task_id", "=", taskId)
        .where("attempts", "=", attempt - 1)
        .where("status", "=", attempt === 1 ? DeliveryStatus.Pending : DeliveryStatus.InProgress)
        .$if(attempt > 1, (update) => update.where("next_attempt_at", "is not", null))
        .returning(["task_id", "redelivery_requested_by"]),
    )
    .insertInto("webhook_attempts")
    .columns(["id", "task_id", "attempt_no", "started_at", "requested_by"])
    .expression((eb) =>
      eb
        .selectFrom("claimed")
        .select([eb.val(id).as("id"), "task_id", eb.val(attempt).as("attempt_no"), eb.val(now).as("started_at"), "redelivery_requested_by"]),
    )
    .returning("requested_by")
    .executeTakeFirst();
  return row && { requestedBy: row.requested_by };
}
