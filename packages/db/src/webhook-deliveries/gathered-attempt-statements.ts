import { CompiledQuery } from "kysely";
import { DeliveryStatus } from "@gen/domain";
import type { Database } from "../create-database.ts";
import { prepareText } from "../prepared-statements.ts";
import type { TaskForBody } from "./claim-attempt.ts";
import type { DeliveryState } from "./delivery-state.ts";
import type { AttemptRecord } from "./finish-attempt.ts";

/*
 * The three statements of every delivery attempt (the decision read, the claim with its task read,
 * the finish) for many attempts at once: one statement per batch, each attempt still getting its
 * own answer, with exactly the conditions of the single statements (delivery-state.ts,
 * claim-attempt.ts, finish-attempt.ts) applied per row. A worker runs up to DELIVERY_CONCURRENCY
 * attempts at once; @gen/webhook-delivery gathers their statements (gatherBatches) and sends a batch
 * of one as the single statement. Plain SQL over unnest() of one array per column: the text is one
 * constant, so nothing is built or compiled per call, and PostgreSQL plans it like the single one.
 * Each row carries its ordinal in the batch (`ord`, from 0), which is how answers find their caller.
 */

// Each text is a constant, so it is also a named prepared statement (prepared-statements.ts).
const run = async <R>(db: Database, text: string, parameters: unknown[]): Promise<R[]> => {
  prepareText(text);
  return (await db.$kysely.executeQuery<R>(CompiledQuery.raw(text, parameters))).rows;
};

/** Ordinal → row, for the rows a batched statement returned. */
function byOrdinal<R extends { ord: number }>(rows: R[], count: number): (Omit<R, "ord"> | undefined)[] {
  const answers: (Omit<R, "ord"> | undefined)[] = new Array(count).fill(undefined);
  for (const { ord, ...row } of rows) answers[ord] = row;
  return answers;
}

const STATES = `
SELECT (r.ord - 1)::int AS ord, d.task_id AS "taskId", d.url, d.status, d.attempts, d.next_attempt_at AS "nextAttemptAt",
       d.redelivery_requested_by AS "redeliveryRequestedBy", t.status AS "taskStatus", t.finished_at AS "taskFinishedAt",
       a.id AS "attemptId", a.started_at AS "attemptStartedAt", a.finished_at AS "attemptFinishedAt", a.requested_by AS "attemptRequestedBy"
FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS r(task_id, attempt, ord)
JOIN webhook_deliveries d ON d.task_id = r.task_id
JOIN tasks t ON t.id = d.task_id
LEFT JOIN webhook_attempts a ON a.task_id = d.task_id AND a.attempt_no = r.attempt`;

/** loadDeliveryState for many (task, attempt) pairs: one answer per pair, in order. */
export async function loadDeliveryStates(db: Database, items: readonly { taskId: string; attempt: number }[]): Promise<(DeliveryState | undefined)[]> {
  const rows = await run<DeliveryState & { ord: number }>(db, STATES, [items.map((item) => item.taskId), items.map((item) => item.attempt)]);
  return byOrdinal(rows, items.length);
}

// The claim's conditions per row: attempt 1 from `pending`, a later one from `in_progress` with a
// next attempt due (claim-attempt.ts's two shapes); `attempts` must be the previous attempt's. Of
// two rows of one batch for the same delivery PostgreSQL updates it once, so one of them gets it.
const CLAIMS = `
WITH r AS (SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::timestamptz[]) WITH ORDINALITY AS r(task_id, attempt, id, now, ord)),
claimed AS (
  UPDATE webhook_deliveries d
  SET status = $5, attempts = r.attempt, last_attempt_at = r.now, next_attempt_at = NULL, updated_at = r.now
  FROM r, tasks t
  WHERE d.task_id = r.task_id AND t.id = d.task_id AND d.attempts = r.attempt - 1
    AND CASE WHEN r.attempt = 1 THEN d.status = $6 ELSE d.status = $5 AND d.next_attempt_at IS NOT NULL END
  RETURNING r.ord, r.id AS attempt_id, r.attempt, r.now, d.redelivery_requested_by,
            t.id, t.model, t.status, t.created_at AS "createdAt", t.output, t.error_code AS "errorCode", t.error_message AS "errorMessage",
            t.charged_credits AS "chargedCredits", t.reserved_credits AS "reservedCredits", t.refunded_credits AS "refundedCredits",
            t.billing_method AS "billingMethod", t.tokens_input AS "tokensInput", t.tokens_output AS "tokensOutput"
),
opened AS (
  INSERT INTO webhook_attempts (id, task_id, attempt_no, started_at, requested_by)
  SELECT attempt_id, id, attempt, now, redelivery_requested_by FROM claimed
  RETURNING id, requested_by
)
SELECT (claimed.ord - 1)::int AS ord, opened.requested_by AS "requestedBy", claimed.id, claimed.model, claimed.status, claimed."createdAt", claimed.output,
       claimed."errorCode", claimed."errorMessage", claimed."chargedCredits", claimed."reservedCredits", claimed."refundedCredits",
       claimed."billingMethod", claimed."tokensInput", claimed."tokensOutput"
FROM claimed JOIN opened ON opened.id = claimed.attempt_id`;

export interface ClaimRequest {
  taskId: string;
  attempt: number;
  /** The attempt log row's id (whd_...). */
  id: string;
  now: Date;
}

/** claimAttemptRow for many attempts: per request what claimAttemptRow would answer, in order. */
export async function claimAttemptRows(
  db: Database,
  items: readonly ClaimRequest[],
): Promise<({ requestedBy: string | null; task: TaskForBody } | undefined)[]> {
  const rows = await run<TaskForBody & { ord: number; requestedBy: string | null }>(db, CLAIMS, [
    items.map((item) => item.taskId),
    items.map((item) => item.attempt),
    items.map((item) => item.id),
    items.map((item) => item.now),
    DeliveryStatus.InProgress,
    DeliveryStatus.Pending,
  ]);
  return byOrdinal(rows, items.length).map((row) => {
    if (!row) return undefined;
    const { requestedBy, ...task } = row;
    return { requestedBy, task };
  });
}

// finish-attempt.ts per row: `keeps` for a record whose status is `failed` (a delivery that was
// ever delivered stays so), `delivered` for an attempt that delivered (sets delivered_at).
const FINISHES = `
WITH r AS (
  SELECT * FROM unnest($1::text[], $2::int[], $3::timestamptz[], $4::text[], $5::int[], $6::int[], $7::text[], $8::text[], $9::timestamptz[], $10::bool[], $11::bool[])
    WITH ORDINALITY AS r(attempt_id, attempt, finished_at, outcome, response_status, duration_ms, status, last_error, next_attempt_at, keeps, delivered, ord)
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

/** finishAttemptRow for many records: per record the delivery's status as written, or undefined, in order. */
export async function finishAttemptRows(db: Database, records: readonly AttemptRecord[]): Promise<(DeliveryStatus | undefined)[]> {
  const column = <T>(pick: (record: AttemptRecord) => T) => records.map(pick);
  const rows = await run<{ ord: number; status: DeliveryStatus }>(db, FINISHES, [
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
  ]);
  return byOrdinal(rows, records.length).map((row) => row?.status);
}
