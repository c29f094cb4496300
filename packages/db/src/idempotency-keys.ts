import { sql } from "kysely";
import type { Queryable } from "./queryable.ts";

/** How long an Idempotency-Key answers with its original task (docs/api: 24 hours). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

/**
 * Deletes idempotency keys older than their window, at most `batchSize` rows per statement and
 * `maxBatches` statements per call, so one run never holds a long lock or a huge transaction; a
 * backlog drains over successive runs. Only rows past the window go: a key inside it still answers
 * replays, and the gateway treats an expired row it still finds as absent.
 */
export async function purgeExpiredIdempotencyKeys(db: Queryable, options: { batchSize?: number; maxBatches?: number; now?: Date } = {}): Promise<number> {
  const batchSize = options.batchSize ?? 1000;
  const maxBatches = options.maxBatches ?? 10;
  const cutoff = new Date((options.now ?? new Date()).getTime() - IDEMPOTENCY_WINDOW_MS);
  let purged = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    // The builder has no DELETE ... LIMIT (PostgreSQL neither): the batch is picked by ctid.
    const result = await sql`DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM idempotency_keys WHERE created_at < ${cutoff} ORDER BY created_at LIMIT ${batchSize}))`.execute(db.$kysely);
    const deleted = Number(result.numAffectedRows ?? 0n);
    purged += deleted;
    if (deleted < batchSize) break;
  }
  return purged;
}

export interface IdempotencyKey {
  requestHash: string;
  taskId: string;
  createdAt: Date;
}

/** The user's key row, expired or not (the caller compares `createdAt` with the window). */
export async function findIdempotencyKey(db: Queryable, userId: string, key: string): Promise<IdempotencyKey | undefined> {
  return db.$kysely
    .selectFrom("idempotency_keys")
    .select(["request_hash as requestHash", "task_id as taskId", "created_at as createdAt"])
    .where("user_id", "=", userId)
    .where("key", "=", key)
    .executeTakeFirst();
}

/**
 * Frees a key whose window passed or whose task was discarded, only while it still names that task:
 * a concurrent request may have replaced it with a fresh key since, which the caller must then lose
 * to on the unique index (and replay).
 */
export async function deleteIdempotencyKey(db: Queryable, userId: string, key: string, taskId: string): Promise<void> {
  await db.$kysely.deleteFrom("idempotency_keys").where("user_id", "=", userId).where("key", "=", key).where("task_id", "=", taskId).execute();
}
