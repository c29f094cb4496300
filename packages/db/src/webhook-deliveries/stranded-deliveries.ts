import { DeliveryStatus, SCHEDULED_ATTEMPTS } from "@gen/domain";
import type { Database } from "../create-database.ts";
import { TERMINAL_TASK_STATUSES } from "./finished-statuses.ts";

// The delivery reconciler's three reads, each one keyset page (`after` the last key of the page before).

/** Attempts claimed before `startedBefore` and never finished, with their task's end. */
export function listOpenAttempts(db: Database, startedBefore: Date, after: string, limit: number) {
  return db.$kysely
    .selectFrom("webhook_attempts as a")
    .innerJoin("tasks as t", "t.id", "a.task_id")
    .select([
      "a.id",
      "a.task_id as taskId",
      "a.attempt_no as attemptNo",
      "a.started_at as startedAt",
      "a.requested_by as requestedBy",
      "t.finished_at as taskFinishedAt",
    ])
    .where("a.finished_at", "is", null)
    .where("a.started_at", "<", startedBefore)
    .where("a.id", ">", after)
    .orderBy("a.id")
    .limit(limit)
    .execute();
}

/** Deliveries still `pending` although their task ended before `finishedBefore`. */
export function listPendingOfFinishedTasks(db: Database, finishedBefore: Date, after: string, limit: number) {
  return db.$kysely
    .selectFrom("webhook_deliveries as d")
    .innerJoin("tasks as t", "t.id", "d.task_id")
    .select("d.task_id as taskId")
    .where("d.status", "=", DeliveryStatus.Pending)
    .where("t.status", "in", TERMINAL_TASK_STATUSES)
    .where("t.finished_at", "<", finishedBefore)
    .where("d.task_id", ">", after)
    .orderBy("d.task_id")
    .limit(limit)
    .execute();
}

/**
 * Deliveries waiting for an attempt due before `dueBefore`: a scheduled one (after attempt 1 or 2)
 * or an operator's manual one.
 */
export function listWaitingDeliveries(db: Database, dueBefore: Date, after: string, limit: number) {
  return db.$kysely
    .selectFrom("webhook_deliveries")
    .select(["task_id as taskId", "attempts"])
    .where("status", "=", DeliveryStatus.InProgress)
    .where("next_attempt_at", "<", dueBefore)
    .where((eb) => eb.or([eb.between("attempts", 1, SCHEDULED_ATTEMPTS - 1), eb("redelivery_requested_by", "is not", null)]))
    .where("task_id", ">", after)
    .orderBy("task_id")
    .limit(limit)
    .execute();
}
