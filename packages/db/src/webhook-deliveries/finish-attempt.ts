import { DeliveryStatus, type LastError } from "@gen/domain";
import type { Database } from "../create-database.ts";

/** How one attempt ended, and where the delivery goes from it (computed by @gen/webhook-delivery). */
export interface AttemptRecord {
  attempt: number;
  attemptId: string;
  finishedAt: Date;
  /** `delivered`, or the attempt's `last_error`. */
  outcome: LastError | typeof DeliveryStatus.Delivered;
  responseStatus: number | null;
  durationMs: number;
  /** `in_progress` while a retry waits (at `nextAttemptAt`); `failed` keeps an earlier `delivered`. */
  status: DeliveryStatus;
  lastError: LastError | null;
  nextAttemptAt: Date | null;
}

/**
 * Records an attempt on its log row and on the delivery in one statement. Conditional on the log
 * row still being open and on the delivery waiting for that attempt: a worker presumed dead that
 * reports after its attempt was recorded as `attempt_lost` (or the other way round) changes
 * nothing, and undefined is returned. A delivery that was ever delivered stays `delivered` when a
 * later (manual) attempt fails, and keeps its `delivered_at`; a 2xx sets `delivered_at` to the
 * attempt's end. Returns the delivery's status as written.
 */
export async function finishAttemptRow(db: Database, record: AttemptRecord): Promise<DeliveryStatus | undefined> {
  const row = await db.$kysely
    .with("closed", (qb) =>
      qb
        .updateTable("webhook_attempts")
        .set({ finished_at: record.finishedAt, outcome: record.outcome, response_status: record.responseStatus, duration_ms: record.durationMs })
        .where("id", "=", record.attemptId)
        .where("finished_at", "is", null)
        .returning("task_id"),
    )
    .updateTable("webhook_deliveries as d")
    .from("closed")
    .set((eb) => ({
      status:
        record.status === DeliveryStatus.Failed
          ? eb.case().when("d.delivered_at", "is not", null).then(DeliveryStatus.Delivered).else(DeliveryStatus.Failed).end()
          : record.status,
      response_status: record.responseStatus,
      last_error: record.lastError,
      delivered_at: record.outcome === DeliveryStatus.Delivered ? record.finishedAt : eb.ref("d.delivered_at"),
      next_attempt_at: record.nextAttemptAt,
      redelivery_requested_by: null,
      updated_at: record.finishedAt,
    }))
    .whereRef("d.task_id", "=", "closed.task_id")
    .where("d.attempts", "=", record.attempt)
    .where("d.status", "=", DeliveryStatus.InProgress)
    .returning("d.status")
    .executeTakeFirst();
  return row?.status;
}
