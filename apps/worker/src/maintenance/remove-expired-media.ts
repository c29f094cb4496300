import { advanceMark, findFinishedTasksAfter, readMark, type Queryable, type TaskPosition } from "@gen/db";
import { MEDIA_ENDPOINTS, TaskStatus } from "@gen/domain";
import type { Storage } from "@gen/storage";
import { removeTaskMedia } from "./remove-task-media.ts";

const DAY_MS = 24 * 3600 * 1000;
// A failed task may have stored part of its output before it failed (80005/80006).
const STATUSES = [TaskStatus.Completed, TaskStatus.Failed] as const;
const START: TaskPosition = { at: new Date(0), id: "" };

export interface MediaRetentionDeps {
  db: Queryable;
  storage: Storage;
  retention: { mediaDays: number };
}

/**
 * MEDIA_RETENTION_DAYS: removes the stored media of tasks that finished before the retention; the
 * task rows stay (their output URLs then answer 404). Each status is walked in (finished, id)
 * order from a mark in `maintenance_marks`, so every task's media are removed once and a run costs
 * what finished since the last one. The mark moves only after the batch's media are gone: a
 * storage failure leaves it, and the next run starts at the same task. Overlapping runs remove the
 * same prefixes twice at worst, and the mark never moves back.
 */
export async function removeExpiredMedia(deps: MediaRetentionDeps, options: { batchSize?: number; maxBatches?: number; now?: Date } = {}): Promise<number> {
  const batchSize = options.batchSize ?? 1000;
  const maxBatches = options.maxBatches ?? 10;
  const before = new Date((options.now ?? new Date()).getTime() - deps.retention.mediaDays * DAY_MS);
  let removed = 0;
  for (const status of STATUSES) {
    const mark = `media-retention-${status}`;
    let after = (await readMark(deps.db, mark)) ?? START;
    for (let batch = 0; batch < maxBatches; batch++) {
      const tasks = await findFinishedTasksAfter(deps.db, { status, endpoints: MEDIA_ENDPOINTS, after, before, limit: batchSize });
      if (tasks.length === 0) break;
      removed += await removeTaskMedia(deps.storage, tasks);
      const last = tasks[tasks.length - 1]!;
      after = { at: last.finishedAt, id: last.id };
      await advanceMark(deps.db, mark, after);
      if (tasks.length < batchSize) break;
    }
  }
  return removed;
}
