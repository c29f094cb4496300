import { DeliveryStatus } from "@gen/domain";
import type { Database } from "../create-database.ts";
import { FINISHED_DELIVERY_STATUSES, TERMINAL_TASK_STATUSES } from "./finished-statuses.ts";

/**
 * An operator's manual redelivery, in one conditional statement: a finished (`delivered` or
 * `failed`) delivery of a terminal, kept task moves to `in_progress` with the attempt due `now` and
 * the operator's name on it, so of two clicks only one gets through. Returns the attempts made so
 * far (the new one is the next number), or undefined when refused.
 */
export async function reopenForRedelivery(db: Database, taskId: string, requestedBy: string, now: Date): Promise<number | undefined> {
  const row = await db.$kysely
    .updateTable("webhook_deliveries as d")
    .from("tasks as t")
    .set({ status: DeliveryStatus.InProgress, next_attempt_at: now, redelivery_requested_by: requestedBy, updated_at: now })
    .where("d.task_id", "=", taskId)
    .whereRef("t.id", "=", "d.task_id")
    .where("t.discarded_at", "is", null)
    .where("t.status", "in", TERMINAL_TASK_STATUSES)
    .where("d.status", "in", FINISHED_DELIVERY_STATUSES)
    .returning("d.attempts")
    .executeTakeFirst();
  return row?.attempts;
}

/**
 * Why a redelivery was refused: undefined for an unknown (or discarded) task, a null status for a
 * task without a webhook, else the delivery's status now.
 */
export async function readRedeliveryTarget(db: Database, taskId: string): Promise<{ status: DeliveryStatus | null } | undefined> {
  return db.$kysely
    .selectFrom("tasks as t")
    .leftJoin("webhook_deliveries as d", "d.task_id", "t.id")
    .select("d.status")
    .where("t.id", "=", taskId)
    .where("t.discarded_at", "is", null)
    .executeTakeFirst();
}
