import { sql, type Insertable, type RawBuilder, type Selectable, type Updateable } from "kysely";
import type { Queryable, Tables } from "@gen/db";

// Rows that tests and benchmarks set up and inspect directly. The @gen/db modules write rows only
// as the service does (a task with its reservation, an attempt through a claim); fixtures also
// need rows in states the service reaches over time, or in bulk, and read columns no module
// returns. Keys are camelCase, as the modules' rows are, so a test compares a fixture's row and a
// module's row under the same names. Test-only SQL lives here, not in @gen/db.

type Table = keyof Tables;
type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;
type Camelised<Columns> = { [K in keyof Columns as Camel<K & string>]: Columns[K] };

/** A row as it is read: every column, camelCase. */
export type RowOf<T extends Table> = Camelised<Selectable<Tables[T]>>;
/** A new row: the columns without a default are required. */
export type NewRow<T extends Table> = Camelised<Insertable<Tables[T]>>;
/** Columns to change. */
export type RowChange<T extends Table> = Camelised<Updateable<Tables[T]>>;
/** Equality on every column named: null means IS NULL, an array any of its values (none when empty). */
export type RowFilter<T extends Table> = { [K in keyof RowOf<T>]?: RowOf<T>[K] | readonly RowOf<T>[K][] };

// jsonb columns: pg would send a JS array as a PostgreSQL array, so every value goes as JSON text.
const JSON_COLUMNS = new Set(["input", "output", "failure_cause"]);
// Every statement of the service sets updated_at when it changes these tables' rows: a row a
// fixture changes looks like one the service changed.
const UPDATED_AT_TABLES = new Set<Table>(["tasks", "webhook_deliveries", "maintenance_marks"]);

const snake = (key: string) => key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
const camel = (column: string) => column.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
const value = (column: string, given: unknown) => (JSON_COLUMNS.has(column) && given !== null ? JSON.stringify(given) : given);
const given = (row: object): [string, unknown][] => Object.entries(row).filter(([, v]) => v !== undefined);

function condition(where: object): RawBuilder<unknown> {
  const terms = given(where).map(([key, v]) => {
    const column = sql.ref(snake(key));
    if (v === null) return sql`${column} IS NULL`;
    if (Array.isArray(v)) return sql`${column} = ANY(${v})`;
    return sql`${column} = ${value(snake(key), v)}`;
  });
  return terms.length === 0 ? sql`TRUE` : sql.join(terms, sql` AND `);
}

// The one conversion the types cannot follow: RowOf<T> derives its keys from the same generated
// column types the rows come back with.
function camelRow<T extends Table>(row: Record<string, unknown>): RowOf<T> {
  return Object.fromEntries(Object.entries(row).map(([column, v]) => [camel(column), v])) as RowOf<T>;
}

// PostgreSQL's limit on a statement's parameters.
const MAX_PARAMETERS = 65_535;

/** Inserts rows and returns them, as few statements as the parameter limit allows; a column some rows leave out takes its default in those. */
export async function insertRows<T extends Table>(db: Queryable, table: T, rows: readonly NewRow<T>[]): Promise<RowOf<T>[]> {
  const keys = [...new Set(rows.flatMap((row) => given(row).map(([key]) => key)))];
  const columns = sql.join(keys.map((key) => sql.ref(snake(key))));
  const perStatement = Math.floor(MAX_PARAMETERS / Math.max(keys.length, 1));
  const inserted: RowOf<T>[] = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const tuples = rows.slice(i, i + perStatement).map((row) => {
      const values = new Map(given(row));
      return sql`(${sql.join(keys.map((key) => (values.has(key) ? sql`${value(snake(key), values.get(key))}` : sql`DEFAULT`)))})`;
    });
    const result = await sql<Record<string, unknown>>`INSERT INTO ${sql.table(table)} (${columns}) VALUES ${sql.join(tuples)} RETURNING *`.execute(db.$kysely);
    inserted.push(...result.rows.map((row) => camelRow<T>(row)));
  }
  return inserted;
}

/** Inserts one row and returns it. */
export async function insertRow<T extends Table>(db: Queryable, table: T, row: NewRow<T>): Promise<RowOf<T>> {
  const [inserted] = await insertRows(db, table, [row]);
  return inserted!;
}

/** Changes the rows the filter selects; returns how many. */
export async function updateRows<T extends Table>(db: Queryable, table: T, where: RowFilter<T>, change: RowChange<T>): Promise<number> {
  const set = new Map(given(change).map(([key, v]) => [snake(key), v]));
  if (UPDATED_AT_TABLES.has(table) && !set.has("updated_at")) set.set("updated_at", new Date());
  const assignments = [...set].map(([column, v]) => sql`${sql.ref(column)} = ${value(column, v)}`);
  const result = await sql`UPDATE ${sql.table(table)} SET ${sql.join(assignments)} WHERE ${condition(where)}`.execute(db.$kysely);
  return Number(result.numAffectedRows ?? 0);
}

/** Removes the rows the filter selects; returns how many. */
export async function deleteRows<T extends Table>(db: Queryable, table: T, where: RowFilter<T>): Promise<number> {
  const result = await sql`DELETE FROM ${sql.table(table)} WHERE ${condition(where)}`.execute(db.$kysely);
  return Number(result.numAffectedRows ?? 0);
}

/** The rows the filter selects, in `orderBy`'s order when given. */
export async function findRows<T extends Table>(db: Queryable, table: T, where: RowFilter<T> = {}, orderBy?: keyof RowOf<T> & string): Promise<RowOf<T>[]> {
  const order = orderBy === undefined ? sql`` : sql` ORDER BY ${sql.ref(snake(orderBy))}`;
  const { rows } = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)} WHERE ${condition(where)}${order}`.execute(db.$kysely);
  return rows.map((row) => camelRow<T>(row));
}

/** The one row the filter selects, or undefined. */
export async function findRow<T extends Table>(db: Queryable, table: T, where: RowFilter<T>): Promise<RowOf<T> | undefined> {
  const [row, extra] = await findRows(db, table, where);
  if (extra !== undefined) throw new Error(`more than one row of ${table} matches`);
  return row;
}

/** The one row the filter selects; throws when there is none. */
export async function readRow<T extends Table>(db: Queryable, table: T, where: RowFilter<T>): Promise<RowOf<T>> {
  const row = await findRow(db, table, where);
  if (row === undefined) throw new Error(`no row of ${table} matches`);
  return row;
}

/** How many rows the filter selects. */
export async function countRows<T extends Table>(db: Queryable, table: T, where: RowFilter<T> = {}): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table)} WHERE ${condition(where)}`.execute(db.$kysely);
  return rows[0]!.n;
}

/** A user whose balance is `credits`, with no ledger entry behind it (@gen/db's ensureUser makes one with a zero balance). */
export async function insertUser(db: Queryable, id: string, credits: number): Promise<void> {
  await insertRow(db, "users", { id, credits });
}
