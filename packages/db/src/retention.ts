import { sql } from "kysely";
import { DeliveryStatus, TaskStatus, type Endpoint, type LedgerKind } from "@gen/domain";
import type { Queryable } from "./queryable.ts";

// The statements of task retention: finding finished tasks past a cutoff, reading them whole for
// the archive, and removing them with every row that names them (delivery, attempts, ledger
// entries, idempotency key). Every one reads `tasks` through its (status, updated_at) index: a
// finished task's updated_at is the moment it finished (or was discarded), and nothing changes it
// afterwards, so "finished before the cutoff" is one index range per status.

/** A task past its retention, as the purge needs it to remove its media and archive it. */
export interface ExpiredTask {
  id: string;
  endpoint: Endpoint;
  status: TaskStatus;
  /** When it finished (or was discarded): its updated_at. */
  finishedAt: Date;
}

/** Where each status's search starts: the finishedAt of the last task an earlier batch of the same run took. */
export type ExpiredFrom = Partial<Record<TaskStatus, Date>>;

// Discarded tasks (60002) stay queued: they are closed, and go too; a queued task that was not
// discarded is still open and is kept whatever its age.
const CLOSED_STATUSES = [TaskStatus.Completed, TaskStatus.Failed, TaskStatus.Queued];
const OPEN_DELIVERY_STATUSES = [DeliveryStatus.Pending, DeliveryStatus.InProgress];

// The guard both the search and the removal apply, so a task that changed in between (a manual
// redelivery reopened its webhook) is left alone by the removal.
const expiredGuard = (cutoff: Date) => sql<boolean>`t.status = ANY(${CLOSED_STATUSES}::text[]) AND t.updated_at < ${cutoff}
    AND (t.status <> ${TaskStatus.Queued} OR t.discarded_at IS NOT NULL)
    AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.task_id = t.id AND d.status = ANY(${OPEN_DELIVERY_STATUSES}::text[]))`;

// One status per branch, each in updated_at order: a range of the (status, updated_at) index read
// from its oldest end (or from where the run's previous batch stopped) and stopped at the limit. A
// status list in one scan cannot be read in order, and without an order the planner may read the
// heap from its start instead. The start matters as much: the index entries of the rows earlier
// batches removed stay until a vacuum, so a search from the oldest end would pass over every one
// of them, more at each batch. From the last finishedAt taken (inclusive: ties at that instant may
// remain), each search reads its own batch's entries and little else.
const expiredBranch = (
  status: TaskStatus,
  cutoff: Date,
  limit: number,
  from: Date | undefined,
) => sql`(SELECT t.id, t.endpoint, t.status, t.updated_at AS "finishedAt" FROM tasks t
    WHERE t.status = ${status} AND ${expiredGuard(cutoff)}${from === undefined ? sql`` : sql` AND t.updated_at >= ${from}`} ORDER BY t.updated_at LIMIT ${limit})`;

/**
 * Up to `limit` closed tasks that finished before `cutoff` and whose webhook is not waiting for an
 * attempt, oldest first within each status (completed, then failed, then discarded); with `from`,
 * each status's search starts there (see `nextExpiredFrom`).
 */
export async function findExpiredTasks(db: Queryable, options: { cutoff: Date; limit: number; from?: ExpiredFrom }): Promise<ExpiredTask[]> {
  const { cutoff, limit, from = {} } = options;
  const { rows } = await sql<ExpiredTask>`${sql.join(
    CLOSED_STATUSES.map((status) => expiredBranch(status, cutoff, limit, from[status])),
    sql` UNION ALL `,
  )} LIMIT ${limit}`.execute(db.$kysely);
  return rows;
}

/**
 * Where the next search of the same run starts, given the batch just taken: each status's latest
 * finishedAt less a millisecond (a Date holds milliseconds, updated_at microseconds).
 */
export function nextExpiredFrom(from: ExpiredFrom, batch: readonly ExpiredTask[]): ExpiredFrom {
  const next = { ...from };
  for (const task of batch) {
    const start = new Date(task.finishedAt.getTime() - 1);
    const last = next[task.status];
    if (last === undefined || start > last) next[task.status] = start;
  }
  return next;
}

/**
 * Each task as one JSON text: its columns, its webhook delivery (or null), its attempts and its
 * ledger entries, for the archive. PostgreSQL builds the text, so no row is parsed and re-encoded here.
 */
export async function readTaskRecords(db: Queryable, ids: readonly string[]): Promise<Array<{ id: string; record: string }>> {
  const { rows } = await sql<{ id: string; record: string }>`SELECT t.id, (to_jsonb(t) || jsonb_build_object(
      'webhook_delivery', (SELECT to_jsonb(d) FROM webhook_deliveries d WHERE d.task_id = t.id),
      'webhook_attempts', (SELECT coalesce(jsonb_agg(to_jsonb(a) ORDER BY a.attempt_no), '[]'::jsonb) FROM webhook_attempts a WHERE a.task_id = t.id),
      'ledger_entries', (SELECT coalesce(jsonb_agg(to_jsonb(l) ORDER BY l.id), '[]'::jsonb) FROM ledger_entries l WHERE l.task_id = t.id)
    ))::text AS record
    FROM tasks t WHERE t.id = ANY(${ids}::text[]) ORDER BY t.id`.execute(db.$kysely);
  return rows;
}

export interface RemovedTasks {
  /** The tasks removed (the guard may have kept some of those asked for). */
  taskIds: string[];
  /** Ledger rows removed: the tasks' entries and their users' earlier carry-forward rows. */
  ledgerEntries: number;
  /** Carry-forward entries written: one per user whose removed entries (with their earlier carry-forward) did not sum to zero. */
  carried: number;
  /** The other rows removed with the tasks: webhook deliveries, attempts and idempotency keys. */
  dependents: number;
}

/**
 * Removes the tasks among `ids` that still pass the guard, with their delivery, attempts,
 * idempotency key and ledger entries, and replaces each of their users' earlier `carry` entries
 * with one whose delta is the sum of all the entries removed (amount: its magnitude), so that a
 * balance still equals the sum of its ledger and a user keeps one carry entry however many batches
 * removed their tasks (one per batch would leave nearly a row per removed task when a batch's
 * tasks belong to as many users). ONE statement: all of it or nothing. Two statements at once on
 * the same user each replace only what they removed (the later one finds the earlier carry row
 * gone and does not count it), so the sum holds and the user briefly has two carry rows. The
 * balance itself does not move, so no user row is locked.
 */
export async function removeTasks(db: Queryable, ids: readonly string[], options: { cutoff: Date; carry: LedgerKind }): Promise<RemovedTasks> {
  // Each table is reached through its task_id index with the removed ids as one array (a hash join
  // over a whole table is what the planner may pick for a CTE it cannot count). The idempotency key
  // is found by created_at, which the task's insert gave both rows (one statement, one now()): the
  // table's only index besides (user_id, key).
  const { rows } = await sql<{ id: string | null; ledgerEntries: number; carried: number; dependents: number }>`WITH
    gone AS (DELETE FROM tasks t WHERE t.id = ANY(${ids}::text[]) AND ${expiredGuard(options.cutoff)} RETURNING t.id, t.created_at),
    entries AS (DELETE FROM ledger_entries l WHERE l.task_id = ANY(ARRAY(SELECT id FROM gone)) RETURNING l.user_id, l.delta),
    deliveries AS (DELETE FROM webhook_deliveries d WHERE d.task_id = ANY(ARRAY(SELECT id FROM gone)) RETURNING 1),
    attempts AS (DELETE FROM webhook_attempts a WHERE a.task_id = ANY(ARRAY(SELECT id FROM gone)) RETURNING 1),
    keys AS (
      DELETE FROM idempotency_keys k
      WHERE k.created_at = ANY(ARRAY(SELECT created_at FROM gone)) AND k.task_id = ANY(ARRAY(SELECT id FROM gone))
      RETURNING 1
    ),
    earlier AS (
      DELETE FROM ledger_entries c
      WHERE c.kind = ${sql.lit(options.carry)} AND c.task_id IS NULL AND c.user_id = ANY(ARRAY(SELECT DISTINCT user_id FROM entries))
      RETURNING c.user_id, c.delta
    ),
    carried AS (
      INSERT INTO ledger_entries (user_id, kind, amount, delta)
      SELECT user_id, ${options.carry}, abs(sum(delta)), sum(delta) FROM (SELECT user_id, delta FROM entries UNION ALL SELECT user_id, delta FROM earlier) m
      GROUP BY user_id HAVING sum(delta) <> 0
      RETURNING id
    ),
    counts AS (SELECT ((SELECT count(*) FROM entries) + (SELECT count(*) FROM earlier))::int AS "ledgerEntries", (SELECT count(*) FROM carried)::int AS carried,
      ((SELECT count(*) FROM deliveries) + (SELECT count(*) FROM attempts) + (SELECT count(*) FROM keys))::int AS dependents)
    SELECT g.id, c."ledgerEntries", c.carried, c.dependents FROM counts c LEFT JOIN gone g ON true`.execute(db.$kysely);
  return {
    taskIds: rows.flatMap((row) => (row.id === null ? [] : [row.id])),
    ledgerEntries: rows[0]?.ledgerEntries ?? 0,
    carried: rows[0]?.carried ?? 0,
    dependents: rows[0]?.dependents ?? 0,
  };
}

/** A position in (updated_at, id) order. */
export interface TaskPosition {
  at: Date;
  id: string;
}

/**
 * Up to `limit` tasks in `status` of the given endpoints that finished after `after` and before
 * `before`, oldest first: the media retention's walk, one index range of (status, updated_at).
 */
export async function findFinishedTasksAfter(
  db: Queryable,
  options: { status: TaskStatus; endpoints: readonly Endpoint[]; after: TaskPosition; before: Date; limit: number },
): Promise<Array<{ id: string; finishedAt: Date }>> {
  const { status, endpoints, after, before, limit } = options;
  const { rows } = await sql<{ id: string; finishedAt: Date }>`SELECT id, updated_at AS "finishedAt" FROM tasks
    WHERE status = ${status} AND updated_at >= ${after.at} AND updated_at < ${before} AND (updated_at > ${after.at} OR id > ${after.id})
      AND endpoint = ANY(${endpoints}::text[])
    ORDER BY updated_at, id LIMIT ${limit}`.execute(db.$kysely);
  return rows;
}
