import type { Selectable } from "kysely";
import type { Tables } from "./tables.ts";

type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;

/**
 * A table's row as the code reads it: camelCase keys over the column types Kysely selects. The
 * modules select `column as camelName` and declare this as their return type, so a column that is
 * missing, renamed or of another type fails to compile instead of being cast.
 */
export type Row<T extends keyof Tables> = { [K in keyof Selectable<Tables[T]> & string as Camel<K>]: Selectable<Tables[T]>[K] };
