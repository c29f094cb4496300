import type { Database } from "../create-database.ts";
import { executePreparedText } from "../prepared-statements.ts";

/*
 * The three statements of every delivery attempt (the decision read, the claim with its task read,
 * the finish) exist in one form: for a batch of attempts, one statement per batch, each attempt
 * still getting its own answer, every condition applied per row. A worker runs up to
 * DELIVERY_CONCURRENCY attempts at once and @gen/webhook-delivery gathers their statements
 * (gatherBatches); a lone attempt is a batch of one. Plain SQL over unnest() of one array per
 * column: the text is one constant, so nothing is built or compiled per call and it is a named
 * prepared statement (prepared-statements.ts). Each row carries its ordinal in the batch (`ord`,
 * from 0), which is how answers find their caller.
 *
 * Every text takes its rows as `unnest(...) LIMIT <the batch's size>`. The limit never cuts a row;
 * it is what lets PostgreSQL keep the generic plan: an array parameter is estimated at 10 rows, so
 * without it the generic plan looked costlier than a one-row custom plan and a lone attempt was
 * planned at every call; a limit of unknown value is estimated at a tenth of that, one row, and the
 * generic plan is then the custom one (primary-key probes per row).
 */

/** Runs a batched statement's text with one array per column; per item its row, or undefined, in order. */
export async function runBatched<R extends { ord: number }>(
  db: Database,
  text: string,
  parameters: unknown[],
  count: number,
): Promise<(Omit<R, "ord"> | undefined)[]> {
  const rows = await executePreparedText<R>(db, text, parameters);
  const answers: (Omit<R, "ord"> | undefined)[] = new Array(count).fill(undefined);
  for (const { ord, ...row } of rows) answers[ord] = row;
  return answers;
}
