import { findExpiredTasks, nextExpiredFrom, type ExpiredFrom, type Queryable } from "@gen/db";
import { removeFinishedTasks } from "@gen/ledger";
import type { Storage } from "@gen/storage";
import { archiveTasks } from "./archive-tasks.ts";
import { removeTaskMedia } from "./remove-task-media.ts";

const DAY_MS = 24 * 3600 * 1000;
// Without a fixed batchSize a batch starts at MIN_BATCH tasks and doubles while one takes less than
// half of BATCH_TARGET_MS, up to MAX_BATCH (halving when one takes over twice the target): much of
// a batch's cost is per statement and per user (each removal replaces the carry-forward row of
// every user it touches), so bigger batches remove more per second, while the target keeps each
// removal statement, and the row locks it holds on the old rows, short on a loaded database.
const MIN_BATCH = 1000;
const MAX_BATCH = 10_000;
const BATCH_TARGET_MS = 1000;

export interface PurgeDeps {
  db: Queryable;
  storage: Storage;
  retention: { taskDays: number; archive: "off" | "storage" };
}

export interface PurgeOptions {
  /**
   * Tasks per batch: one search, one archive write per day, one removal statement. Default: from
   * 1,000 to 10,000 as the time of a batch allows.
   */
  batchSize?: number;
  /** Batches per run; a backlog drains over successive runs. Default 10. */
  maxBatches?: number;
  now?: Date;
  /** Stops the run after the batch in hand (the benchmark's time limit). */
  signal?: AbortSignal;
  /** Called after each batch (the benchmark's figures). */
  onBatch?: (batch: PurgeBatch) => void;
}

export interface PurgeBatch {
  tasks: number;
  ledgerEntries: number;
  carried: number;
  /** Webhook deliveries, attempts and idempotency keys removed with the tasks. */
  dependents: number;
  archiveKeys: string[];
}

/**
 * TASK_RETENTION_DAYS: removes tasks that finished before the retention, with everything that
 * names them, in bounded batches. Each batch: find (an index range, no lock), archive (when on),
 * remove the media, then remove the rows in one statement that re-checks the guard. A failure at
 * any step leaves that batch's rows for the next run, so nothing is removed that was not archived;
 * media go before the rows, so a failure between the two leaves a finished task whose output URLs
 * answer 404 (as under MEDIA_RETENTION_DAYS) until the next run. Safe on several workers at once:
 * two runs may archive a batch twice, but each row is removed, and carried forward, once.
 */
export async function purgeFinishedTasks(deps: PurgeDeps, options: PurgeOptions = {}): Promise<PurgeBatch> {
  let batchSize = options.batchSize ?? MIN_BATCH;
  const maxBatches = options.maxBatches ?? 10;
  const now = options.now ?? new Date();
  const cutoff = new Date(now.getTime() - deps.retention.taskDays * DAY_MS);
  const total: PurgeBatch = { tasks: 0, ledgerEntries: 0, carried: 0, dependents: 0, archiveKeys: [] };
  let from: ExpiredFrom = {};
  for (let batch = 0; batch < maxBatches && options.signal?.aborted !== true; batch++) {
    const started = performance.now();
    const expired = await findExpiredTasks(deps.db, { cutoff, limit: batchSize, from });
    if (expired.length === 0) break;
    from = nextExpiredFrom(from, expired);
    const archiveKeys = deps.retention.archive === "storage" ? await archiveTasks(deps.db, deps.storage, expired, now) : [];
    await removeTaskMedia(deps.storage, expired);
    const removed = await removeFinishedTasks(
      deps.db,
      expired.map((task) => task.id),
      cutoff,
    );
    const done = { tasks: removed.taskIds.length, ledgerEntries: removed.ledgerEntries, carried: removed.carried, dependents: removed.dependents, archiveKeys };
    options.onBatch?.(done);
    total.tasks += done.tasks;
    total.ledgerEntries += done.ledgerEntries;
    total.carried += done.carried;
    total.dependents += done.dependents;
    total.archiveKeys.push(...archiveKeys);
    if (expired.length < batchSize) break;
    if (options.batchSize === undefined) batchSize = nextBatchSize(batchSize, performance.now() - started);
  }
  return total;
}

function nextBatchSize(size: number, ms: number): number {
  if (ms < BATCH_TARGET_MS / 2) return Math.min(MAX_BATCH, size * 2);
  if (ms > BATCH_TARGET_MS * 2) return Math.max(MIN_BATCH, Math.floor(size / 2));
  return size;
}
