import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { preparingPool } from "./prepared-statements.ts";
import type { Tables } from "./tables.ts";

/**
 * Raw SQL on the pool, for tests and benchmarks only (fixtures, EXPLAIN replays in
 * bench/data-scale.ts). Product code reaches PostgreSQL through the table-group modules of this
 * package, written with `$kysely`.
 */
export interface SqlPool {
  query<R extends object = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
  /** A tagged template like Prisma's `$queryRaw`: every `${value}` becomes a bound parameter. */
  rows<R extends object = Record<string, unknown>>(strings: TemplateStringsArray, ...values: unknown[]): Promise<R[]>;
}

/**
 * The pg pool and Kysely on it. `$kysely` is the typed way to write SQL: the query builder
 * compiles to one statement on the pool, with row types generated from prisma/schema.prisma
 * (src/tables.ts), and costs a few microseconds per query where Prisma's client, whose
 * query-compiler engine is the only one available offline, spends 1-3 ms of CPU (bench/README.md).
 * Prisma is the schema, migration and type-generation tool only: no process builds its client.
 */
export interface Database {
  $kysely: Kysely<Tables>;
  $sql: SqlPool;
  /** The pool itself, for a caller that must hand it to another client (test fixtures). */
  $pool: pg.Pool;
  /** Ends the pool's connections. */
  $disconnect(): Promise<void>;
}

export interface DatabaseOptions {
  /** Connections in the pool (the apps pass DATABASE_POOL_SIZE). Default 10. */
  max?: number;
  /** A request must learn quickly that PostgreSQL is gone (70002), so connecting never waits long. */
  connectTimeoutMs?: number;
  /** Upper bound for one query, so a stalled server cannot hang a request or a job. */
  queryTimeoutMs?: number;
  /**
   * Server-side bound for one statement (PostgreSQL `statement_timeout`). The client's
   * query_timeout only stops waiting: the statement would still run and could commit after the
   * client was told 70002. Below queryTimeoutMs, the server gives up first, so a time-out answered
   * to a client is true. Default: queryTimeoutMs minus 1 s (at least half of it).
   */
  statementTimeoutMs?: number;
  /**
   * Called with every SQL statement sent and its bound values (tests count round trips with it;
   * bench/data-scale.ts replays the exact statements under EXPLAIN).
   */
  onQuery?: (sql: string, values: unknown[]) => void;
  /**
   * Send the hot fixed-shape statements as named prepared statements (prepared-statements.ts).
   * Default: on, unless the URL carries `pgbouncer=true` (a transaction-mode pooler, where a
   * connection's prepared statements are not the session's; docs/configuration.md).
   * `$sql` always sends unnamed ones.
   */
  preparedStatements?: boolean;
}

export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  const queryTimeoutMs = options.queryTimeoutMs ?? 5000;
  const statementTimeoutMs = options.statementTimeoutMs ?? Math.max(queryTimeoutMs - 1000, Math.ceil(queryTimeoutMs / 2));
  const pooler = behindPgbouncer(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 1000,
    query_timeout: queryTimeoutMs,
    // Sent in the start-up packet, so they cost no round trip. A transaction left open by a
    // client that gave up (its locks and reserved credits with it) is ended by the server too.
    // PgBouncer refuses a start-up packet carrying them ("unsupported startup parameter"), and
    // its server connections are not this client's anyway: behind it they are the pooler's
    // settings (connect_query, or ALTER ROLE ... SET; docs/operations/scaling.md "Connection pooler").
    ...(pooler ? {} : { statement_timeout: statementTimeoutMs, idle_in_transaction_session_timeout: queryTimeoutMs * 2 }),
    idleTimeoutMillis: 30_000,
  });
  // An idle connection dropped by the server (restart, outage) must not crash the process; the
  // next query opens a new one, or fails with an error that maps to 70002.
  pool.on("error", () => undefined);
  // The same for a connection while it is checked out: pg emits a server's "terminating
  // connection" (57P01, a fast shutdown) that arrives between statements on the client itself, and
  // without a listener there it is an uncaught exception (it killed a worker in the fault suite's
  // PostgreSQL outage). The client's next statement fails instead and the pool discards it.
  pool.on("connect", (client) => void client.on("error", () => undefined));
  const onQuery = options.onQuery;
  const query = async <R extends object>(text: string, values?: unknown[]) => {
    onQuery?.(text, values ?? []);
    const result = await pool.query(text, values);
    return { rows: result.rows as R[], rowCount: result.rowCount };
  };
  const $sql: SqlPool = {
    query,
    rows: async <R extends object>(strings: TemplateStringsArray, ...values: unknown[]) =>
      (
        await query<R>(
          strings.reduce((text, part, i) => `${text}$${i}${part}`),
          values,
        )
      ).rows,
  };
  const $kysely = new Kysely<Tables>({
    dialect: new PostgresDialect({ pool: preparingPool(pool, options.preparedStatements ?? !pooler) }),
    ...(onQuery ? { log: (event) => onQuery(event.query.sql, [...event.query.parameters]) } : {}),
  });
  return {
    $kysely,
    $sql,
    $pool: pool,
    $disconnect: () => pool.end().catch(() => undefined),
  };
}

/** The URL parameter Prisma's tools use for a transaction-mode pooler: prepared statements off, no start-up settings. */
export function behindPgbouncer(url: string): boolean {
  try {
    return new URL(url).searchParams.get("pgbouncer") === "true";
  } catch {
    return false;
  }
}
