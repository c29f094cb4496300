import { createHash } from "node:crypto";
import { CompiledQuery, type PostgresPool, type PostgresPoolClient, type RawBuilder } from "kysely";
import type pg from "pg";
import type { Queryable } from "./queryable.ts";

/**
 * Texts of the fixed-shape hot statements, each with the name it is prepared under. PostgreSQL
 * parses a named statement once per connection and, after five executions, may keep a generic plan
 * (plan_cache_mode auto), where an unnamed one is parsed and planned at every call: for these
 * statements that was more of PostgreSQL's CPU than executing them. Only texts the code registers
 * get a name, never one built from values, so the set is the code's own statement shapes; the cap
 * is a backstop should a caller ever register texts that vary, since every name costs memory in
 * every backend for the connection's life.
 */
const names = new Map<string, string>();
const MAX_NAMES = 200;

/**
 * Marks `text` as a fixed-shape statement to prepare. The name is a digest of the text, so the same
 * text compiled by another Kysely instance (a transaction's) gets the same name, and two texts never
 * share one (pg refuses a name reused for another text on a connection rather than run the wrong one).
 */
export function prepareText(text: string): void {
  if (names.has(text) || names.size >= MAX_NAMES) return;
  names.set(text, `gen_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`);
}

/**
 * The pool as Kysely's PostgresDialect sees it: every checked-out client sends a registered text
 * as a named statement and everything else unnamed, as before. Names live per connection (the
 * client remembers which it already parsed), so this needs session pooling end to end: behind a
 * transaction-mode pooler `prepared` is false (DATABASE_URL `pgbouncer=true`, docs/configuration.md).
 */
export function preparingPool(pool: pg.Pool, prepared: boolean): PostgresPool {
  if (!prepared) return pool as unknown as PostgresPool;
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  // Kysely only ever passes (text, values) here: it streams no cursors.
  const wrap = (client: pg.PoolClient) => {
    let stale = false;
    return {
      query: async (text: string, values: unknown[]) => {
        const name = names.get(text);
        if (name === undefined) return client.query(text, values);
        try {
          return await client.query({ name, text, values });
        } catch (error) {
          // A migration changed the type of a column the statement returns: PostgreSQL refuses
          // the prepared statement from now on (0A000, "cached plan must not change result type"),
          // so this connection is closed at its release and the next one parses the new form.
          if ((error as { code?: string }).code === "0A000") stale = true;
          throw error;
        }
      },
      release: (destroy?: boolean) => client.release(destroy || stale),
    } as unknown as PostgresPoolClient;
  };
  return {
    connect: async () => {
      const client = await pool.connect();
      let named = wrapped.get(client);
      if (!named) wrapped.set(client, (named = wrap(client)));
      return named;
    },
    end: () => pool.end(),
  };
}

/**
 * Runs a plain-SQL statement as a prepared one. Only for texts of a bounded set of shapes (values
 * bound, arrays for lists): whatever is spliced into the text with `sql.raw` or a fragment must
 * take a few fixed forms.
 */
export async function executePrepared<R>(db: Queryable, query: RawBuilder<R>): Promise<R[]> {
  const compiled = query.compile(db.$kysely);
  prepareText(compiled.sql);
  return (await db.$kysely.executeQuery(compiled)).rows;
}

/**
 * Runs a constant text (built once at load, `$n` placeholders) with its values as a prepared
 * statement: nothing is compiled per call (the delivery-attempt statements, the reservation close).
 */
export async function executePreparedText<R>(db: Queryable, text: string, values: unknown[]): Promise<R[]> {
  prepareText(text);
  return (await db.$kysely.executeQuery<R>(CompiledQuery.raw(text, values))).rows;
}
