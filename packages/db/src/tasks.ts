import { DeliveryStatus, OPEN_TASK_STATUSES, TaskStatus, type Endpoint, type LedgerKind } from "@gen/domain";
import type { Row } from "./camel-row.ts";
import type { Queryable } from "./queryable.ts";

// Every statement on `tasks`, including the one that creates a task with its reservation and
// webhook row. Kysely on the pg pool, not Prisma's client: the task reads and the insert are the
// API's hottest statements, and Prisma's query-compiler client spends 1-3 ms of CPU per query
// where the builder spends microseconds (bench/README.md).

export type Task = Row<"tasks">;

/** Every column under the name the code uses; the return types below check the result against `Task`. */
export const TASK_SELECTION = [
  "id",
  "user_id as userId",
  "endpoint",
  "model",
  "status",
  "input",
  "output",
  "error_code as errorCode",
  "error_message as errorMessage",
  "webhook_url as webhookUrl",
  "request_id as requestId",
  "billing_method as billingMethod",
  "reserved_credits as reservedCredits",
  "charged_credits as chargedCredits",
  "refunded_credits as refundedCredits",
  "tokens_input as tokensInput",
  "tokens_output as tokensOutput",
  "created_at as createdAt",
  "updated_at as updatedAt",
  "started_at as startedAt",
  "finished_at as finishedAt",
  "upstream_id as upstreamId",
  "discarded_at as discardedAt",
] as const;

/** A task by id, discarded or not (the worker reloads it at every step). */
export async function findTask(db: Queryable, id: string): Promise<Task | undefined> {
  return db.$kysely.selectFrom("tasks").select(TASK_SELECTION).where("id", "=", id).executeTakeFirst();
}

/** The user's own task unless it was discarded (60002): another user's task looks exactly like a missing one. */
export async function findVisibleTask(db: Queryable, id: string, userId: string): Promise<Task | undefined> {
  return db.$kysely.selectFrom("tasks").select(TASK_SELECTION).where("id", "=", id).where("user_id", "=", userId).where("discarded_at", "is", null).executeTakeFirst();
}

/** A task to create: everything but the columns the database fills in. */
export interface NewTask {
  id: string;
  userId: string;
  endpoint: Endpoint;
  model: string;
  input: Record<string, unknown>;
  webhookUrl: string | null;
  requestId: string;
  billingMethod: string;
  /** The reservation (its ledger row, from @gen/ledger): `delta` is applied to the balance, which may not go below zero. */
  reserve: { kind: LedgerKind; amount: number; delta: number };
  /** Stored with the task when the request carried an Idempotency-Key. */
  idempotency?: { key: string; requestHash: string };
}

/**
 * Creates a task in ONE statement (one round trip, no BEGIN/COMMIT): the conditional debit gates
 * every insert (the task, its reserve ledger row, its webhook delivery row when it has a webhook,
 * its idempotency key), and PostgreSQL applies all or none of them. Undefined when the balance does
 * not cover the reservation. A second submission holding the same Idempotency-Key fails on the
 * key's unique index and nothing of it is written.
 *
 * One task per statement today; everything it needs travels in `NewTask`, so a later group commit
 * can turn several into one multi-row statement without changing the callers' data.
 */
export async function insertTask(db: Queryable, task: NewTask): Promise<Task | undefined> {
  const { reserve, idempotency } = task;
  return db.$kysely
    .with("debit", (q) =>
      q
        .updateTable("users")
        .set((eb) => ({ credits: eb("credits", "+", reserve.delta) }))
        .where("id", "=", task.userId)
        .where((eb) => eb(eb("credits", "+", reserve.delta), ">=", 0))
        .returning("id"),
    )
    .with("task", (q) =>
      q
        .insertInto("tasks")
        .columns(["id", "user_id", "endpoint", "model", "status", "input", "webhook_url", "request_id", "billing_method", "reserved_credits"])
        .expression((eb) =>
          eb
            .selectFrom("debit")
            .select([
              eb.val(task.id).as("id"),
              eb.val(task.userId).as("user_id"),
              eb.val(task.endpoint).as("endpoint"),
              eb.val(task.model).as("model"),
              eb.val(TaskStatus.Queued).as("status"),
              eb.cast(eb.val(JSON.stringify(task.input)), "jsonb").as("input"),
              eb.cast(eb.val(task.webhookUrl), "text").as("webhook_url"),
              eb.val(task.requestId).as("request_id"),
              eb.val(task.billingMethod).as("billing_method"),
              eb.val(reserve.amount).as("reserved_credits"),
            ]),
        )
        .returning(TASK_SELECTION),
    )
    .with("reserve", (q) =>
      q
        .insertInto("ledger_entries")
        .columns(["user_id", "task_id", "kind", "amount", "delta"])
        .expression((eb) =>
          eb
            .selectFrom("debit")
            .select([eb.val(task.userId).as("user_id"), eb.val(task.id).as("task_id"), eb.val(reserve.kind).as("kind"), eb.val(reserve.amount).as("amount"), eb.val(reserve.delta).as("delta")]),
        )
        .returning("id"),
    )
    // Written only when the task has a webhook / the request an Idempotency-Key: the same statement
    // text either way, each row gated by its value being present.
    .with("webhook", (q) =>
      q
        .insertInto("webhook_deliveries")
        .columns(["task_id", "url", "status"])
        .expression((eb) =>
          eb
            .selectFrom("debit")
            .select([eb.val(task.id).as("task_id"), eb.cast(eb.val(task.webhookUrl), "text").as("url"), eb.val(DeliveryStatus.Pending).as("status")])
            .where(eb.cast(eb.val(task.webhookUrl), "text"), "is not", null),
        )
        .returning("task_id"),
    )
    .with("idempotency", (q) =>
      q
        .insertInto("idempotency_keys")
        .columns(["user_id", "key", "request_hash", "task_id"])
        .expression((eb) =>
          eb
            .selectFrom("debit")
            .select([
              eb.val(task.userId).as("user_id"),
              eb.cast(eb.val(idempotency?.key ?? null), "text").as("key"),
              eb.val(idempotency?.requestHash ?? "").as("request_hash"),
              eb.val(task.id).as("task_id"),
            ])
            .where(eb.cast(eb.val(idempotency?.key ?? null), "text"), "is not", null),
        )
        .returning("task_id"),
    )
    .selectFrom("task")
    .selectAll()
    .executeTakeFirst();
}

/**
 * Queued to in_progress, unless it was discarded: the gateway's compensation checks the same under
 * the same row lock, so a task is either refunded and hidden or started, never both. Returns the
 * task as it now is (one statement when it starts; a task already started, or discarded since it
 * was loaded, is read again).
 */
export async function markTaskStarted(db: Queryable, id: string): Promise<Task | undefined> {
  const started = await db.$kysely
    .updateTable("tasks")
    .set({ status: TaskStatus.InProgress, started_at: new Date(), updated_at: new Date() })
    .where("id", "=", id)
    .where("status", "=", TaskStatus.Queued)
    .where("discarded_at", "is", null)
    .returning(TASK_SELECTION)
    .executeTakeFirst();
  return started ?? findTask(db, id);
}

/** The provider's job id, recorded at once: a worker taking over after a crash polls this job, never a new one. */
export async function recordUpstreamId(db: Queryable, id: string, upstreamId: string): Promise<void> {
  await db.$kysely.updateTable("tasks").set({ upstream_id: upstreamId, updated_at: new Date() }).where("id", "=", id).execute();
}

/**
 * Ids of open, visible tasks not touched since `before`, in id order after `after` (keyset pages of
 * at most `limit`): the task reconciler's candidates for a lost job.
 */
export async function findStaleOpenTaskIds(db: Queryable, page: { before: Date; after: string; limit: number }): Promise<string[]> {
  const rows = await db.$kysely
    .selectFrom("tasks")
    .select("id")
    .where("status", "in", OPEN_TASK_STATUSES)
    .where("discarded_at", "is", null)
    .where("updated_at", "<", page.before)
    .where("id", ">", page.after)
    .orderBy("id")
    .limit(page.limit)
    .execute();
  return rows.map((row) => row.id);
}
