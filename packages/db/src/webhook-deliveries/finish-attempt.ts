import { DeliveryStatus, type LastError } from "@gen/domain";
import type { Database } from "../create-database.ts";
import { runBatched } from "./batched-statement.ts";

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

/*
 * Records each attempt on its log row and on the delivery in one statement. Per row conditional on
 * the log row still being open and on the delivery waiting for that attempt: a worker presumed dead
 * that reports after its attempt was recorded as `attempt_lost` (or the other way round) changes
 * nothing. `keeps` (a record whose status is `failed`): a delivery that was ever delivered stays
 * `delivered` when a later (manual) attempt fails, and keeps its `delivered_at`; `delivered` (a 2xx)
 * sets `delivered_at` to the attempt's end.
 */
const FINISHES = `
WITH r AS (
  SELECT * FROM unnest($1::text[], $2::int[], $3::timestamptz[], $4::text[], $5::int[], $6::int[], $7::text[], $8::text[], $9::timestamptz[], $10::bool[], $11::bool[])
    WITH ORDINALITY AS r(attempt_id, attempt, finished_at, outcome, response_status, duration_ms, status, last_error, next_attempt_at, keeps, delivered, ord)
  LIMIT $15
),
closed AS (
  UPDATE webhook_attempts a
  SET finished_at = r.finished_at, outcome = r.outcome, response_status = r.response_status, duration_ms = r.duration_ms
  FROM r
  WHERE a.id = r.attempt_id AND a.finished_at IS NULL
  RETURNING a.task_id, r.ord
)
UPDATE webhook_deliveries d
SET status = CASE WHEN r.keeps THEN CASE WHEN d.delivered_at IS NOT NULL THEN $12 ELSE $13 END ELSE r.status END,
    response_status = r.response_status, last_error = r.last_error,
    delivered_at = CASE WHEN r.delivered THEN r.finished_at ELSE d.delivered_at END,
    next_attempt_at = r.next_attempt_at, redelivery_requested_by = NULL, updated_at = r.finished_at
FROM closed JOIN r ON r.ord = closed.ord
WHERE d.task_id = closed.task_id AND d.attempts = r.attempt AND d.status = $14
RETURNING (closed.ord - 1)::int AS ord, d.status`;

/** The finishes of many attempts in one statement: per record, in order, the delivery's status as written, or undefined (already recorded). */
export async function finishAttemptRows(db: Database, records: readonly AttemptRecord[]): Promise<(DeliveryStatus | undefined)[]> {
  const column = <T>(pick: (record: AttemptRecord) => T) => records.map(pick);
  const rows = await runBatched<{ ord: number; status: DeliveryStatus }>(
    db,
    FINISHES,
    [
      column((r) => r.attemptId),
      column((r) => r.attempt),
      column((r) => r.finishedAt),
      column((r) => r.outcome),
      column((r) => r.responseStatus),
      column((r) => r.durationMs),
      column((r) => r.status),
      column((r) => r.lastError),
      column((r) => r.nextAttemptAt),
      column((r) => r.status === DeliveryStatus.Failed),
      column((r) => r.outcome === DeliveryStatus.Delivered),
      DeliveryStatus.Delivered,
      DeliveryStatus.Failed,
      DeliveryStatus.InProgress,
      records.length,
    ],
    records.length,
  );
  return rows.map((row) => row?.status);
}
