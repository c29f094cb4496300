import { CompiledQuery } from "kysely";
import type { Database } from "../create-database.ts";
import { prepareText } from "../prepared-statements.ts";

/*
 * The three statements of every delivery attempt (the decision read, the claim with its task read,
 * the finish) exist in one form: for a batch of attempts, one statement per batch, each attempt
 * still getting its own answer, every condition applied per row. A worker runs up to
 * DELIVERY_CONCURRENCY attempts at once and @gen/webhook-delivery gathers their statements
 * (gatherBatches); a lone attempt is a batch of one. Plain SQL over unnest() of one array per
 * column: the text is one constant, so nothing is built or compiled per call, it is a named
 * prepared statement (prepared-statements.ts), and its generic plan is the single row's plan (index
 * probes per row, bench/README.md "h-stmt"). Each row carries its ordinal in the batch (`ord`, from
 * 0), which is how answers find their caller.
 */

/** Runs a batched statement's text with one array per column; per item its row, or undefined, in order. */
export async function runBatched<R extends { ord: number }>(
  db: Database,
  text: string,
  parameters: unknown[],
  count: number,
): Promise<(Omit<R, "ord"> | undefined)[]> {
  prepareText(text);
  const { rows } = await db.$kysely.executeQuery<R>(CompiledQuery.raw(text, parameters));
  const answers: (Omit<R, "ord"> | undefined)[] = new Array(count).fill(undefined);
  for (const { ord, ...row } of rows) answers[ord] = row;
  return answers;
}
