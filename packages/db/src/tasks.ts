import { sql } from "kysely";
import { DeliveryStatus, OPEN_TASK_STATUSES, TaskStatus, type Endpoint, type FailureStep, type LedgerKind, type ProviderKind } from "@gen/domain";
import type { Row } from "./camel-row.ts";
import { compiledOnce } from "./compiled-once.ts";
import { executePrepared } from "./prepared-statements.ts";
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
  "upstream_provider as upstreamProvider",
  "upstream_model as upstreamModel",
  "upstream_callback as upstreamCallback",
  "failure_cause as failureCause",
  "discarded_at as discardedAt",
] as const;

/** A task by id, discarded or not (the worker reloads it at every step). */
export async function findTask(db: Queryable, id: string): Promise<Task | undefined> {
  const [task] = await taskStatement(db, "task", id);
  return task;
}

// Compiled once and prepared (compiled-once.ts): the worker reads its task at every step.
const taskStatement = compiledOnce((k, _shape, id: string) => k.selectFrom("tasks").select(TASK_SELECTION).where("id", "=", id));

/** The user's own task unless it was discarded (60002): another user's task looks exactly like a missing one. */
export async function findVisibleTask(db: Queryable, id: string, userId: string): Promise<Task | undefined> {
  return db.$kysely
    .selectFrom("tasks")
    .select(TASK_SELECTION)
    .where("id", "=", id)
    .where("user_id", "=", userId)
    .where("discarded_at", "is", null)
    .executeTakeFirst();
}

/**
 * The tasks among `ids` that were not discarded, whoever owns them, in no particular order: the
 * gateway reads the tasks of many polls in one statement and checks each poll's owner itself.
 * Compiled once (compiled-once.ts): building and compiling the query cost more gateway CPU per
 * poll than the rest of the read.
 */
export async function findVisibleTasks(db: Queryable, ids: readonly string[]): Promise<Task[]> {
  return visibleTasksStatement(db, "visible", ids);
}

const visibleTasksStatement = compiledOnce((k, _shape, ids: readonly string[]) =>
  k
    .selectFrom("tasks")
    .select(TASK_SELECTION)
    .where("id", "=", sql<string>`any(${ids}::text[])`)
    .where("discarded_at", "is", null),
);

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
 * Creates one task: `insertTasks` with one row, so the product has one task insert. One statement
 * (one round trip, no BEGIN/COMMIT): the debit gates every insert (the task, its reserve ledger
 * row, its webhook delivery row when it has a webhook, its idempotency key), and PostgreSQL applies
 * all or none of them. Undefined when the balance does not cover the reservation. A second
 * submission holding the same Idempotency-Key fails on the key's unique index and nothing of it is
 * written. With "skipLocked", "locked" when the user's row was held elsewhere (nothing written).
 */
export async function insertTask(db: Queryable, task: NewTask, locks: UserRowLocks = "wait"): Promise<Task | undefined | "locked"> {
  const { tasks, lockedUserIds } = await insertTasks(db, [task], locks);
  return locks === "skipLocked" && lockedUserIds.size > 0 ? "locked" : tasks[0];
}

/**
 * What the statement does with a user row another transaction holds: wait for it (PostgreSQL's
 * lock wait, up to statement_timeout), or leave that user's tasks out and name the user so the
 * caller can send them on alone (`FOR UPDATE SKIP LOCKED`). One prepared text each.
 */
export type UserRowLocks = "wait" | "skipLocked";

/** What `insertTasks` did: `tasks` lines up with its input. */
export interface InsertedTasks {
  /** The created task, or undefined for a task the statement did not write. */
  tasks: (Task | undefined)[];
  /**
   * Users none of whose tasks were looked at: with "skipLocked", those whose row another
   * transaction held; either way, a user with no row (nothing can be debited).
   */
  lockedUserIds: ReadonlySet<string>;
}

// RETURNING list of the plain-SQL statements that hand back a whole task (`closeReservation`): TASK_SELECTION with quoted camel-case aliases.
export const TASK_RETURNING = TASK_SELECTION.map((column) => {
  const [name, alias] = column.split(" as ");
  return alias ? `${name} AS "${alias}"` : name;
}).join(", ");

const LOCKING_CLAUSE: Record<UserRowLocks, string> = { wait: "FOR UPDATE", skipLocked: "FOR UPDATE SKIP LOCKED" };

/**
 * Creates many tasks in ONE statement (the gateway's group commit; bench/round-trip-cost.ts: 0.67 ms
 * of PostgreSQL per single insert, 0.037 ms per task in a statement of 32).
 *
 * Per user, tasks are debited in the array's order against the balance as it is once the user's
 * row is locked: the longest prefix that fits is written, the rest of that user's tasks are not
 * (undefined). A caller wanting "one at a time" semantics for those (a later, cheaper task may still
 * fit) writes them one by one with `insertTask` afterwards. User rows are locked in id order, so two
 * such statements never deadlock on each other.
 *
 * With "skipLocked" a user row another transaction holds (an operator's open transaction, another
 * gateway's batch, a worker refunding part of a task) is not waited for: that user's tasks are left out
 * (undefined) and the user is in `lockedUserIds`; everybody else's tasks are written at once.
 *
 * The statement is all or nothing: a unique violation (an Idempotency-Key another request committed
 * meanwhile, or the same user and key twice in `tasks`: the caller must not pass that) or a value
 * PostgreSQL refuses fails every task in it.
 */
export async function insertTasks(db: Queryable, tasks: NewTask[], locks: UserRowLocks = "wait"): Promise<InsertedTasks> {
  if (tasks.length === 0) return { tasks: [], lockedUserIds: new Set() };
  // A prepared statement (prepared-statements.ts): one text for any number of tasks, as ONE json
  // parameter (one native JSON.stringify; thirteen text arrays cost the gateway a pg array
  // serialisation per column, the input's escaping included), and one
  // per locking clause.
  // The CTEs nobody reads have no RETURNING: PostgreSQL runs them all the same.
  const rows = await executePrepared(
    db,
    sql<{ id: string | null; createdAt: Date | null; lockedUserId: string | null }>`
    WITH input AS (
      SELECT * FROM ROWS FROM (jsonb_to_recordset(${JSON.stringify(tasks.map(inputRow))}::jsonb) AS (
        id text, user_id text, endpoint text, model text, input jsonb, webhook_url text, request_id text, billing_method text,
        kind text, amount int, delta int, idempotency_key text, request_hash text
      )) WITH ORDINALITY AS i(id, user_id, endpoint, model, input, webhook_url, request_id, billing_method, kind, amount, delta, idempotency_key, request_hash, ord)
    ),
    -- FOR UPDATE returns each balance as last committed and holds it until this statement commits
    -- (SKIP LOCKED: a row held elsewhere is not returned, and its user's tasks are not accepted).
    balance AS (
      SELECT id, credits FROM users WHERE id IN (SELECT user_id FROM input) ORDER BY id ${sql.raw(LOCKING_CLAUSE[locks])}
    ),
    accepted AS (
      SELECT i.* FROM (SELECT input.*, sum(delta) OVER (PARTITION BY user_id ORDER BY ord) AS running FROM input) i
      JOIN balance b ON b.id = i.user_id
      WHERE b.credits + i.running >= 0
    ),
    debit AS (
      UPDATE users u SET credits = u.credits + d.total
      FROM (SELECT user_id, sum(delta) AS total FROM accepted GROUP BY user_id) d
      WHERE u.id = d.user_id
    ),
    task AS (
      INSERT INTO tasks (id, user_id, endpoint, model, status, input, webhook_url, request_id, billing_method, reserved_credits)
      SELECT id, user_id, endpoint, model, ${TaskStatus.Queued}, input, webhook_url, request_id, billing_method, amount FROM accepted ORDER BY ord
      RETURNING id, created_at
    ),
    reserve AS (
      INSERT INTO ledger_entries (user_id, task_id, kind, amount, delta)
      SELECT user_id, id, kind, amount, delta FROM accepted ORDER BY ord
    ),
    webhook AS (
      INSERT INTO webhook_deliveries (task_id, url, status)
      SELECT id, webhook_url, ${DeliveryStatus.Pending} FROM accepted WHERE webhook_url IS NOT NULL
    ),
    idempotency AS (
      INSERT INTO idempotency_keys (user_id, key, request_hash, task_id)
      SELECT user_id, idempotency_key, request_hash, id FROM accepted WHERE idempotency_key IS NOT NULL
    )
    SELECT id, created_at AS "createdAt", NULL AS "lockedUserId" FROM task
    UNION ALL
    SELECT NULL, NULL, u.user_id FROM (SELECT DISTINCT user_id FROM input) u WHERE NOT EXISTS (SELECT 1 FROM balance b WHERE b.id = u.user_id)`,
  );
  const created = new Map<string, Date>();
  const lockedUserIds = new Set<string>();
  for (const row of rows) {
    if (row.lockedUserId !== null) lockedUserIds.add(row.lockedUserId);
    else created.set(row.id!, row.createdAt!);
  }
  return {
    tasks: tasks.map((task) => {
      const createdAt = created.get(task.id);
      return createdAt === undefined ? undefined : createdTask(task, createdAt);
    }),
    lockedUserIds,
  };
}

const inputRow = (t: NewTask) => ({
  id: t.id,
  user_id: t.userId,
  endpoint: t.endpoint,
  model: t.model,
  input: t.input,
  webhook_url: t.webhookUrl,
  request_id: t.requestId,
  billing_method: t.billingMethod,
  kind: t.reserve.kind,
  amount: t.reserve.amount,
  delta: t.reserve.delta,
  idempotency_key: t.idempotency?.key ?? null,
  request_hash: t.idempotency?.requestHash ?? null,
});

/**
 * The row the insert wrote, without reading it back: every column is the statement's input or
 * NULL but the two timestamps, which are the statement's `now()` as stored (millisecond
 * precision). Returning all 23 columns per task (`input` parsed back from jsonb, four timestamps)
 * was about 4 % of the gateway's CPU per submission. `input` is the
 * object as submitted: the same JSON value as the stored jsonb, whose key order may differ (what
 * a later read returns).
 */
function createdTask(task: NewTask, createdAt: Date): Task {
  return {
    id: task.id,
    userId: task.userId,
    endpoint: task.endpoint,
    model: task.model,
    status: TaskStatus.Queued,
    input: task.input as Task["input"],
    output: null,
    errorCode: null,
    errorMessage: null,
    webhookUrl: task.webhookUrl,
    requestId: task.requestId,
    billingMethod: task.billingMethod,
    reservedCredits: task.reserve.amount,
    chargedCredits: null,
    refundedCredits: null,
    tokensInput: null,
    tokensOutput: null,
    createdAt,
    updatedAt: new Date(createdAt.getTime()),
    startedAt: null,
    finishedAt: null,
    upstreamId: null,
    upstreamProvider: null,
    upstreamModel: null,
    upstreamCallback: false,
    failureCause: null,
    discardedAt: null,
  };
}

/**
 * Queued to in_progress, unless it was discarded: the gateway's compensation checks the same under
 * the same row lock, so a task is either refunded and hidden or started, never both. Returns the
 * task as it now is (one statement when it starts; a task already started, or discarded since it
 * was loaded, is read again).
 */
export async function markTaskStarted(db: Queryable, id: string): Promise<Task | undefined> {
  const [started] = await startStatement(db, "start", id, new Date());
  return started ?? findTask(db, id);
}

const startStatement = compiledOnce((k, _shape, id: string, now: Date) =>
  k
    .updateTable("tasks")
    .set({ status: TaskStatus.InProgress, started_at: now, updated_at: now })
    .where("id", "=", id)
    .where("status", "=", TaskStatus.Queued)
    .where("discarded_at", "is", null)
    .returning(TASK_SELECTION),
);

/** Where a task's upstream job runs: the route (provider and its model id) and the job's id there. */
export interface UpstreamJobRef {
  provider: ProviderKind;
  upstreamModel: string;
  upstreamId: string;
  /** The job was created with our callback address: its polls are a safety net. */
  callback?: boolean;
}

/**
 * The upstream job, recorded at once after its submit: a worker taking over after a crash polls
 * this job on this route, never a new one on another.
 */
export async function recordUpstreamJob(db: Queryable, id: string, job: UpstreamJobRef): Promise<void> {
  await upstreamStatement(db, "upstream", id, job.upstreamId, job.provider, job.upstreamModel, job.callback === true, new Date());
}

const upstreamStatement = compiledOnce(
  (k, _shape, id: string, upstreamId: string, provider: ProviderKind, upstreamModel: string, callback: boolean, now: Date) =>
    k
      .updateTable("tasks")
      .set({ upstream_id: upstreamId, upstream_provider: provider, upstream_model: upstreamModel, upstream_callback: callback, updated_at: now })
      .where("id", "=", id),
);

/**
 * What the provider said when a task failed, for the operator (the console, the logs); the public
 * API never reads it. Written just before the task settles, and only while it is open, so a task
 * a client cancelled meanwhile keeps no cause of a failure it did not have.
 */
export interface FailureCause {
  /** The generation step it failed in. */
  step?: FailureStep;
  /** The route that failed: catalog `provider` and `upstreamModel`. */
  provider?: ProviderKind;
  upstreamModel?: string;
  /** HTTP status of the provider's answer; absent for a network error. */
  status?: number;
  /** The provider's error text, or the network error's message (at most 500 characters). */
  message?: string;
  /** The provider's request id, to quote to its support. */
  requestId?: string;
  /** The network or file-system error's code (ECONNREFUSED, ETIMEDOUT, ENOSPC, ...), or a storage service's error name (AccessDenied, ...). */
  code?: string;
}

export async function recordFailureCause(db: Queryable, id: string, cause: FailureCause): Promise<void> {
  await db.$kysely
    .updateTable("tasks")
    .set({ failure_cause: JSON.stringify(cause) })
    .where("id", "=", id)
    .where("status", "in", OPEN_TASK_STATUSES)
    .execute();
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
