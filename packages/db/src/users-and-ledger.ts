import { LedgerKind, type TaskStatus } from "@gen/domain";
import { executePreparedText } from "./prepared-statements.ts";
import type { Queryable } from "./queryable.ts";
import { TASK_RETURNING, type Task } from "./tasks.ts";

// Every statement on `users` and `ledger_entries`. The rules (what a reservation, a charge, a
// refund or a grant writes, and the invariant) are @gen/ledger's; these statements only apply the
// entries they are given: a balance always moves by the sum of the `delta`s written with it.

/** One ledger row as @gen/ledger builds it. */
export interface LedgerEntryValues {
  kind: LedgerKind;
  amount: number;
  delta: number;
}

/** The balance, or undefined for an unknown user. */
export async function readCredits(db: Queryable, userId: string): Promise<number | undefined> {
  const row = await db.$kysely.selectFrom("users").select("credits").where("id", "=", userId).executeTakeFirst();
  return row?.credits;
}

/** Creates the user with a zero balance unless it exists. */
export async function ensureUser(db: Queryable, userId: string): Promise<void> {
  await db.$kysely
    .insertInto("users")
    .values({ id: userId, credits: 0 })
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();
}

/**
 * Writes a task-less entry (a grant) and moves the balance by its delta, in one statement. Returns
 * the new balance, or undefined (nothing written) for an unknown user.
 */
export async function applyUserEntry(db: Queryable, userId: string, entry: LedgerEntryValues): Promise<number | undefined> {
  const row = await db.$kysely
    .with("credited", (q) =>
      q
        .updateTable("users")
        .set((eb) => ({ credits: eb("credits", "+", entry.delta) }))
        .where("id", "=", userId)
        .returning(["id", "credits"]),
    )
    .with("entry", (q) =>
      q
        .insertInto("ledger_entries")
        .columns(["user_id", "kind", "amount", "delta"])
        .expression((eb) =>
          eb
            .selectFrom("credited")
            .select(["id as user_id", eb.val(entry.kind).as("kind"), eb.val(entry.amount).as("amount"), eb.val(entry.delta).as("delta")]),
        )
        .returning("id"),
    )
    .selectFrom("credited")
    .select("credits")
    .executeTakeFirst();
  return row?.credits;
}

/** How a reservation is closed: the task finished (settlement), or it was discarded before it ran (compensation, 60002). */
export type TaskEnd =
  | {
      kind: "finished";
      status: TaskStatus;
      output: Record<string, unknown> | null;
      errorCode: number | null;
      errorMessage: string | null;
      tokens: { input: number; output: number } | null;
    }
  | { kind: "discarded" };

export interface ReservationClose {
  /** The statuses the task may be in; in any other, or discarded already, nothing is written. */
  from: readonly TaskStatus[];
  /** The task's reserved_credits, which `charged` and `refunded` split; a row reserving anything else is not closed. */
  reserved: number;
  end: TaskEnd;
  charged: number;
  refunded: number;
  /** The charge and refund rows; the balance moves by the sum of their deltas. */
  entries: readonly LedgerEntryValues[];
}

/** The closed task. */
export type ClosedTask = Task;

/**
 * Closes a task's reservation in ONE statement: the task row (guarded by its status, so of two
 * racing closes only one matches; the unique (task_id, kind) backs that up), its ledger entries and
 * the balance, plus, for a discarded task, its idempotency key (freed for a retry). Nothing is read
 * first: the caller gives the reservation it split, and the guard requires it of the row. Returns
 * the closed task, or undefined when the guard did not match and nothing was written.
 *
 * Plain SQL with only the parts this close needs (no balance update when nothing is refunded, no
 * idempotency key outside a discard): planning the full form took longer than running it
 *. Its four forms are constant texts built at load (nothing is
 * compiled per call) and prepared statements (prepared-statements.ts),
 * parsed once per connection; the entries are arrays, so their number does not change the text.
 */
export async function closeReservation(db: Queryable, taskId: string, close: ReservationClose): Promise<ClosedTask | undefined> {
  if (close.entries.length === 0) throw new Error("closeReservation needs at least one ledger entry");
  const now = new Date();
  const credit = close.entries.reduce((sum, entry) => sum + entry.delta, 0);
  const end = close.end;
  const column = <T>(pick: (entry: LedgerEntryValues) => T): T[] => close.entries.map(pick);
  // $1-$9 in every form, then the finished task's columns, then the credit: CLOSE_TEXTS' order.
  const values: unknown[] = [
    now,
    taskId,
    close.from,
    close.reserved,
    close.charged,
    close.refunded,
    column((e) => e.kind),
    column((e) => e.amount),
    column((e) => e.delta),
  ];
  if (end.kind === "finished") {
    values.push(
      end.status,
      end.output === null ? null : JSON.stringify(end.output),
      end.errorCode,
      end.errorMessage,
      end.tokens?.input ?? null,
      end.tokens?.output ?? null,
    );
  }
  if (credit !== 0) values.push(credit);
  const text = CLOSE_TEXTS[end.kind][credit === 0 ? "noCredit" : "credit"];
  const rows = await executePreparedText<Task>(db, text, values);
  return rows[0];
}

/**
 * The close's texts, built once: finished or discarded, with or without a balance credit. Each uses every one of its parameters
 * (PostgreSQL infers their types from where they are used).
 */
function closeText(kind: TaskEnd["kind"], withCredit: boolean): string {
  let next = 10;
  const set =
    kind === "discarded"
      ? "discarded_at = $1"
      : `status = $${next++}, output = $${next++}::jsonb, error_code = $${next++}, error_message = $${next++}, tokens_input = $${next++}::int, tokens_output = $${next++}::int, finished_at = $1`;
  return `
    WITH closed AS (
      UPDATE tasks SET ${set}, charged_credits = $5::int, refunded_credits = $6::int, updated_at = $1
      WHERE id = $2 AND status = ANY($3::text[]) AND discarded_at IS NULL AND reserved_credits = $4::int
      RETURNING ${TASK_RETURNING}
    ),
    entries AS (
      INSERT INTO ledger_entries (user_id, task_id, kind, amount, delta)
      SELECT c."userId", c.id, e.kind, e.amount, e.delta
      FROM closed c, unnest($7::text[], $8::int[], $9::int[]) WITH ORDINALITY AS e(kind, amount, delta, ord)
      ORDER BY e.ord
    )${
      // A close that refunds nothing leaves the user's row (and its lock) alone.
      withCredit ? `, credit AS (UPDATE users SET credits = credits + $${next}::int WHERE id = (SELECT "userId" FROM closed))` : ""
    }${kind === "discarded" ? ", freed AS (DELETE FROM idempotency_keys WHERE task_id = (SELECT id FROM closed))" : ""}
    SELECT * FROM closed`;
}

const CLOSE_TEXTS = {
  finished: { credit: closeText("finished", true), noCredit: closeText("finished", false) },
  discarded: { credit: closeText("discarded", true), noCredit: closeText("discarded", false) },
} as const;

/** A task's ledger rows summed by kind, next to what the task row says (`checkLedger` in @gen/ledger judges them). */
export interface TaskLedger {
  taskId: string;
  userId: string;
  status: TaskStatus;
  discarded: boolean;
  reservedCredits: number;
  chargedCredits: number | null;
  refundedCredits: number | null;
  reserves: number;
  charges: number;
  refunds: number;
  grants: number;
  reserved: number;
  charged: number;
  refunded: number;
  deltaSum: number;
}

/**
 * One keyset page of tasks (id order, after `after`) with their ledger sums; optionally one user's
 * only. The page is cut first and each task's rows summed through the (task_id, kind) index, so a
 * page costs the same however large the tables are.
 */
export async function readTaskLedgers(db: Queryable, page: { userId?: string; after: string; limit: number }): Promise<TaskLedger[]> {
  let tasks = db.$kysely
    .selectFrom("tasks")
    .select(["id", "user_id", "status", "discarded_at", "reserved_credits", "charged_credits", "refunded_credits"])
    .where("id", ">", page.after)
    .orderBy("id")
    .limit(page.limit);
  if (page.userId !== undefined) tasks = tasks.where("user_id", "=", page.userId);
  return (
    db.$kysely
      .selectFrom(tasks.as("t"))
      // An aggregate without GROUP BY is exactly one row, so the lateral join keeps every task (and user).
      .innerJoinLateral(
        (eb) =>
          eb
            .selectFrom("ledger_entries")
            .select((l) => {
              const count = (kind: LedgerKind) => l.cast<number>(l.fn.count("id").filterWhere("kind", "=", kind), "integer");
              const sum = (kind: LedgerKind) => l.cast<number>(l.fn.coalesce(l.fn.sum("amount").filterWhere("kind", "=", kind), l.lit(0)), "integer");
              return [
                count(LedgerKind.Reserve).as("reserves"),
                count(LedgerKind.Charge).as("charges"),
                count(LedgerKind.Refund).as("refunds"),
                count(LedgerKind.Grant).as("grants"),
                sum(LedgerKind.Reserve).as("reserved"),
                sum(LedgerKind.Charge).as("charged"),
                sum(LedgerKind.Refund).as("refunded"),
                l.cast<number>(l.fn.coalesce(l.fn.sum("delta"), l.lit(0)), "integer").as("deltaSum"),
              ];
            })
            .whereRef("task_id", "=", "t.id")
            .as("l"),
        (join) => join.onTrue(),
      )
      .select((eb) => [
        "t.id as taskId",
        "t.user_id as userId",
        "t.status",
        eb.cast<boolean>(eb("t.discarded_at", "is not", null), "boolean").as("discarded"),
        "t.reserved_credits as reservedCredits",
        "t.charged_credits as chargedCredits",
        "t.refunded_credits as refundedCredits",
        "l.reserves",
        "l.charges",
        "l.refunds",
        "l.grants",
        "l.reserved",
        "l.charged",
        "l.refunded",
        "l.deltaSum",
      ])
      .orderBy("t.id")
      .execute()
  );
}

/** A user's balance next to the sum of their ledger deltas, and their rows that name no task but should (neither grant nor carry_forward). */
export interface UserLedger {
  userId: string;
  credits: number;
  deltaSum: number;
  taskless: number;
}

/** One keyset page of users with their ledger sums, the same way (through the user_id index). */
export async function readUserLedgers(db: Queryable, page: { userId?: string; after: string; limit: number }): Promise<UserLedger[]> {
  let users = db.$kysely.selectFrom("users").select(["id", "credits"]).where("id", ">", page.after).orderBy("id").limit(page.limit);
  if (page.userId !== undefined) users = users.where("id", "=", page.userId);
  return db.$kysely
    .selectFrom(users.as("u"))
    .innerJoinLateral(
      (eb) =>
        eb
          .selectFrom("ledger_entries")
          .select((l) => [
            l.cast<number>(l.fn.coalesce(l.fn.sum("delta"), l.lit(0)), "integer").as("deltaSum"),
            l
              .cast<number>(
                l.fn.count("id").filterWhere((w) => w.and([w("task_id", "is", null), w("kind", "not in", [LedgerKind.Grant, LedgerKind.CarryForward])])),
                "integer",
              )
              .as("taskless"),
          ])
          .whereRef("user_id", "=", "u.id")
          .as("l"),
      (join) => join.onTrue(),
    )
    .select(["u.id as userId", "u.credits", "l.deltaSum", "l.taskless"])
    .orderBy("u.id")
    .execute();
}

/** Ledger rows naming a task that does not exist. */
export async function readOrphanEntries(
  db: Queryable,
  userId?: string,
): Promise<Array<{ id: string; userId: string; taskId: string | null; kind: LedgerKind }>> {
  let query = db.$kysely
    .selectFrom("ledger_entries as l")
    .leftJoin("tasks as t", "t.id", "l.task_id")
    .select(["l.id", "l.user_id as userId", "l.task_id as taskId", "l.kind"])
    .where("l.task_id", "is not", null)
    .where("t.id", "is", null)
    .orderBy("l.id");
  if (userId !== undefined) query = query.where("l.user_id", "=", userId);
  return query.execute();
}
