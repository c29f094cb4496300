import type { CompiledQuery, Compilable, Kysely } from "kysely";
import { prepareText } from "./prepared-statements.ts";
import type { Queryable } from "./queryable.ts";
import type { Tables } from "./tables.ts";

/** Stands for the bound value at `index` while a statement's text is compiled. */
class Slot {
  constructor(readonly index: number) {}
}

/**
 * A hot-path statement (a poll's task read, the key lookup, the task read and start), written with the
 * query builder as usual but built and compiled once per database and `shape`: later calls only
 * bind their values to the cached text. `build` gets stand-ins for `values`, so it must use them only as bound values
 * (no arithmetic or branching on them: whatever changes the text belongs in `shape`). Saves the
 * builder's and the compiler's CPU for every call (a tenth of a millisecond per statement).
 * Each (statement, shape) is also a named prepared statement (prepared-statements.ts), which saves
 * PostgreSQL's parse and plan the same way; so `shape` must take few values too.
 */
export function compiledOnce<V extends unknown[], R>(build: (db: Kysely<Tables>, shape: string, ...values: V) => Compilable<R>) {
  const cache = new WeakMap<Kysely<Tables>, Map<string, CompiledQuery<R>>>();
  return async (db: Queryable, shape: string, ...values: V): Promise<R[]> => {
    let shapes = cache.get(db.$kysely);
    if (!shapes) cache.set(db.$kysely, (shapes = new Map()));
    let compiled = shapes.get(shape);
    if (!compiled) {
      compiled = build(db.$kysely, shape, ...(values.map((_, index) => new Slot(index)) as V)).compile();
      prepareText(compiled.sql);
      shapes.set(shape, compiled);
    }
    const parameters = compiled.parameters.map((value) => (value instanceof Slot ? values[value.index] : value));
    const result = await db.$kysely.executeQuery<R>({ ...compiled, parameters });
    return result.rows;
  };
}
