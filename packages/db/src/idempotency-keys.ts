import type { Database } from "./create-database.ts";

/** How long an Idempotency-Key answers with its original task (docs/api: 24 hours). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

/**
 * Deletes idempotency keys older than their window, at most `batchSize` rows per statement and
 * `maxBatches` statements per call, so one run never holds a long lock or a huge transaction; a
 * backlog drains over successive runs. Only rows past the window go: a key inside it still answers
 * replays, and the gateway treats an expired row it still finds as absent.
 */
export async function purgeExpiredIdempotencyKeys(db: Database, options: { batchSize?: number; maxBatches?: number; now?: Date } = {}): Promise<number> {
  const batchSize = options.batchSize ?? 1000;
  const maxBatches = options.maxBatches ?? 10;
  const cutoff = new Date((options.now ?? new Date()).getTime() - IDEMPOTENCY_WINDOW_MS);
  let purged = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const { rowCount } = await db.$sql.query(
      `DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
         SELECT ctid FROM idempotency_keys WHERE created_at < $1 ORDER BY created_at LIMIT $2))`,
      [cutoff, batchSize],
    );
    purged += rowCount ?? 0;
    if ((rowCount ?? 0) < batchSize) break;
  }
  return purged;
}
