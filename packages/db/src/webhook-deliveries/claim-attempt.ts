import { DeliveryStatus } from "@gen/domain";
import type { Database } from "../create-database.ts";
import { compiledOnce } from "../compiled-once.ts";

// The task columns a webhook body is rendered from (@gen/task-render's RenderableTask).
const TASK_FOR_BODY = [
  "t.id",
  "t.model",
  "t.status",
  "t.created_at as createdAt",
  "t.output",
  "t.error_code as errorCode",
  "t.error_message as errorMessage",
  "t.charged_credits as chargedCredits",
  "t.reserved_credits as reservedCredits",
  "t.refunded_credits as refundedCredits",
  "t.billing_method as billingMethod",
  "t.tokens_input as tokensInput",
  "t.tokens_output as tokensOutput",
] as const;

/**
 * Claims attempt `attempt` and reads what its body is rendered from, in one statement: the
 * delivery moves to `in_progress` with `attempts = attempt` and `last_attempt_at = now`, the
 * attempt log gets its row `id`, and the task's columns come back with it (a terminal task's do
 * not change, so this is the body polling would return). The update is conditional on the state
 * the previous step left (attempt 1: `pending`; later: `in_progress` waiting for a scheduled or a
 * manual attempt), so of two workers holding the same job only one gets a row back; the unique
 * (task_id, attempt_no) backs that up. Whether the attempt is manual is copied from the delivery
 * row inside the same statement, so it cannot disagree with what was claimed. Returns the operator
 * who asked for it (null: a scheduled attempt) and the task, or undefined when nothing was claimed
 * (a task whose row is gone has nothing to claim: loadDeliveryState already skips it).
 */
const claimStatement = compiledOnce((k, shape, taskId: string, attempt: number, previous: number, id: string, now: Date) =>
  k
    .with("claimed", (qb) =>
      qb
        .updateTable("webhook_deliveries as d")
        .from("tasks as t")
        .set({ status: DeliveryStatus.InProgress, attempts: attempt, last_attempt_at: now, next_attempt_at: null, updated_at: now })
        .where("d.task_id", "=", taskId)
        .whereRef("t.id", "=", "d.task_id")
        .where("d.attempts", "=", previous)
        .where("d.status", "=", shape === "first" ? DeliveryStatus.Pending : DeliveryStatus.InProgress)
        .$if(shape !== "first", (update) => update.where("d.next_attempt_at", "is not", null))
        .returning(["d.redelivery_requested_by", ...TASK_FOR_BODY]),
    )
    .with("opened", (qb) =>
      qb
        .insertInto("webhook_attempts")
        .columns(["id", "task_id", "attempt_no", "started_at", "requested_by"])
        .expression((eb) =>
          eb
            .selectFrom("claimed")
            .select([eb.val(id).as("id"), "claimed.id", eb.val(attempt).as("attempt_no"), eb.val(now).as("started_at"), "redelivery_requested_by"]),
        )
        .returning("requested_by"),
    )
    .selectFrom(["opened", "claimed"])
    .selectAll("claimed")
    .select("opened.requested_by as requestedBy"),
);

export async function claimAttemptRow(db: Database, taskId: string, attempt: number, id: string, now: Date) {
  const [row] = await claimStatement(db, attempt === 1 ? "first" : "later", taskId, attempt, attempt - 1, id, now);
  if (!row) return undefined;
  const { requestedBy, redelivery_requested_by: _copied, ...task } = row;
  return { requestedBy, task };
}

/** The task row a webhook body is rendered from, as the claim read it. */
export type TaskForBody = NonNullable<Awaited<ReturnType<typeof claimAttemptRow>>>["task"];
