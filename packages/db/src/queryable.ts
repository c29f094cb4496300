import type { Kysely } from "kysely";
import type { Tables } from "./tables.ts";

/**
 * What every statement of @gen/db runs on: a `Database`, or the transaction `inTransaction` hands
 * out, so a caller can put several modules' statements under one commit (the admin CLI's
 * create-key) without the modules knowing.
 */
export interface Queryable {
  $kysely: Kysely<Tables>;
}

export function inTransaction<T>(db: Queryable, work: (tx: Queryable) => Promise<T>): Promise<T> {
  return db.$kysely.transaction().execute((trx) => work({ $kysely: trx }));
}
