import { DeliveryStatus, type LastError } from "@gen/domain";
import type { Database } from "../create-database.ts";
import { compiledOnce } from "../compiled-once.ts";

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
  // The text differs only by whether `failed` keeps an earlier `delivered` and whether this attempt delivered.
  const shape = `${record.status === DeliveryStatus.Failed ? "failed" : "status"}|${record.outcome === DeliveryStatus.Delivered ? "delivered" : "kept"}`;
  const [row] = await finishStatement(
    db,
    shape,
    record.attemptId,
    record.attempt,
    record.finishedAt,
    record.outcome,
    record.responseStatus,
    record.durationMs,
    record.status,
    record.lastError,
    record.nextAttemptAt,
  );
  return row?.status;
}

const finishStatement = compiledOnce(
  (
    k,
    shape,
    attemptId: string,
    attempt: number,
    finishedAt: Date,
    outcome: AttemptRecord["outcome"],
    responseStatus: number | null,
    durationMs: number,
    status: DeliveryStatus,
    lastError: LastError | null,
    nextAttemptAt: Date | null,
  ) =>
    k
      .with("closed", (qb) =>
        qb
          .updateTable("webhook_attempts")
          .set({ finished_at: finishedAt, outcome, response_status: responseStatus, duration_ms: durationMs })
          .where("id", "=", attemptId)
          .where("finished_at", "is", null)
          .returning("task_id"),
      )
      .updateTable("webhook_deliveries as d")
      .from("closed")
      .set((eb) => ({
        status: shape.startsWith("failed")
          ? eb.case().when("d.delivered_at", "is not", null).then(DeliveryStatus.Delivered).else(DeliveryStatus.Failed).end()
          : status,
        response_status: responseStatus,
        last_error: lastError,
        delivered_at: shape.endsWith("|delivered") ? finishedAt : eb.ref("d.delivered_at"),
        next_attempt_at: nextAttemptAt,
        redelivery_requested_by: null,
        updated_at: finishedAt,
      }))
      .whereRef("d.task_id", "=", "closed.task_id")
      .where("d.attempts", "=", attempt)
      .where("d.status", "=", DeliveryStatus.InProgress)
      .returning("d.status"),
);
