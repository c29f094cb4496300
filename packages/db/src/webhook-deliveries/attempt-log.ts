import { sql } from "kysely";
import type { Database } from "../create-database.ts";

const ATTEMPT_COLUMNS = [
  "id",
  "task_id as taskId",
  "attempt_no as attemptNo",
  "started_at as startedAt",
  "finished_at as finishedAt",
  "outcome",
  "response_status as responseStatus",
  "duration_ms as durationMs",
  "requested_by as requestedBy",
] as const;

/** Every attempt of a task, in order. */
export function listAttempts(db: Database, taskId: string) {
  return db.$kysely.selectFrom("webhook_attempts").select(ATTEMPT_COLUMNS).where("task_id", "=", taskId).orderBy("attempt_no").execute();
}

/** One attempt-log row. */
export type AttemptLogRow = Awaited<ReturnType<typeof listAttempts>>[number];

/** The latest finished attempts of all tasks: a backward scan of the (finished_at, started_at) index. */
export function listRecentAttempts(db: Database, limit: number) {
  return db.$kysely
    .selectFrom("webhook_attempts")
    .select(ATTEMPT_COLUMNS)
    .where("finished_at", "is not", null)
    .orderBy("finished_at", "desc")
    .limit(limit)
    .execute();
}

/**
 * Attempts finished in [from, to) counted per minute and outcome. One grouped query: a range on
 * `finished_at`, which leads the (finished_at, started_at) index of webhook_attempts.
 */
export function countOutcomesPerMinute(db: Database, from: Date, to: Date) {
  const minute = sql<Date>`date_trunc('minute', finished_at)`;
  return db.$kysely
    .selectFrom("webhook_attempts")
    .select((eb) => [minute.as("minute"), "outcome", eb.cast<number>(eb.fn.countAll(), "integer").as("count")])
    .where("finished_at", ">=", from)
    .where("finished_at", "<", to)
    .where("outcome", "is not", null)
    .groupBy([minute, "outcome"])
    .execute();
}
