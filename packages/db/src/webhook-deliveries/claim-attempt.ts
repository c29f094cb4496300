import { DeliveryStatus } from "@gen/domain";
import type { Row } from "../camel-row.ts";
import type { Database } from "../create-database.ts";
import { runBatched } from "./batched-statement.ts";

/** The task columns a webhook body is rendered from (@gen/task-render's RenderableTask): a column the body needs is added here and to CLAIMS' RETURNING. */
export const TASK_FOR_BODY_COLUMNS = [
  "id",
  "model",
  "status",
  "createdAt",
  "output",
  "errorCode",
  "errorMessage",
  "chargedCredits",
  "reservedCredits",
  "refundedCredits",
  "billingMethod",
  "tokensInput",
  "tokensOutput",
] as const;

/** The task row a webhook body is rendered from, as the claim read it. */
export type TaskForBody = Pick<Row<"tasks">, (typeof TASK_FOR_BODY_COLUMNS)[number]>;

/*
 * Claims attempt `attempt` and reads what its body is rendered from, in one statement: the delivery
 * moves to `in_progress` with `attempts = attempt` and `last_attempt_at = now`, the attempt log gets
 * its row `id`, and the task's columns (TaskForBody: a column the body needs is added there and to
 * RETURNING) come back with it; a terminal task's do not change, so this is the body polling would
 * return. Per row the update is conditional on the state the previous step left: attempt 1 from
 * `pending`, a later one from `in_progress` with a next attempt due (scheduled or manual), and
 * `attempts` the previous attempt's. So of two workers holding the same job only one gets a row
 * back, and of two rows of one batch for the same delivery PostgreSQL updates it once; the unique
 * (task_id, attempt_no) backs that up. Whether the attempt is manual is copied from the delivery row
 * inside the same statement, so it cannot disagree with what was claimed. A delivery whose task
 * row is gone is not claimed (the join on tasks).
 */
const CLAIMS = `
WITH r AS (SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::timestamptz[]) WITH ORDINALITY AS r(task_id, attempt, id, now, ord) LIMIT $7),
claimed AS (
  UPDATE webhook_deliveries d
  SET status = $5, attempts = r.attempt, last_attempt_at = r.now, next_attempt_at = NULL, updated_at = r.now
  FROM r, tasks t
  WHERE d.task_id = r.task_id AND t.id = d.task_id AND d.attempts = r.attempt - 1
    AND CASE WHEN r.attempt = 1 THEN d.status = $6 ELSE d.status = $5 AND d.next_attempt_at IS NOT NULL END
  RETURNING r.ord, r.id AS attempt_id, r.attempt, r.now, d.redelivery_requested_by,
            t.id, t.model, t.status, t.created_at AS "createdAt", t.output, t.error_code AS "errorCode", t.error_message AS "errorMessage",
            t.charged_credits AS "chargedCredits", t.reserved_credits AS "reservedCredits", t.refunded_credits AS "refundedCredits",
            t.billing_method AS "billingMethod", t.tokens_input AS "tokensInput", t.tokens_output AS "tokensOutput",
            t.request_id AS "requestId"
),
opened AS (
  INSERT INTO webhook_attempts (id, task_id, attempt_no, started_at, requested_by)
  SELECT attempt_id, id, attempt, now, redelivery_requested_by FROM claimed
  RETURNING id, requested_by
)
SELECT (claimed.ord - 1)::int AS ord, opened.requested_by AS "requestedBy", claimed."requestId", claimed.id, claimed.model, claimed.status, claimed."createdAt", claimed.output,
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

/**
 * The claims of many attempts in one statement: per request, in order, the operator who asked for
 * the attempt (null: a scheduled one), the submission's request id (for the attempt's log lines) and
 * the task, or undefined when nothing was claimed.
 */
export async function claimAttemptRows(
  db: Database,
  items: readonly ClaimRequest[],
): Promise<({ requestedBy: string | null; requestId: string | null; task: TaskForBody } | undefined)[]> {
  const rows = await runBatched<TaskForBody & { ord: number; requestedBy: string | null; requestId: string | null }>(
    db,
    CLAIMS,
    [
      items.map((item) => item.taskId),
      items.map((item) => item.attempt),
      items.map((item) => item.id),
      items.map((item) => item.now),
      DeliveryStatus.InProgress,
      DeliveryStatus.Pending,
      items.length,
    ],
    items.length,
  );
  return rows.map((row) => {
    if (!row) return undefined;
    const { requestedBy, requestId, ...task } = row;
    return { requestedBy, requestId, task };
  });
}
