import type { JobType, Queue } from "bullmq";
import { findStaleOpenTaskIds, type Database } from "@gen/db";
import { GENERATION_JOB_OPTIONS, generationJobId, type GenerationJobData } from "@gen/queues";

const BATCH = 500;
/** Where a job that will still run a step can be: every state but completed and failed. */
const LIVE_STATES: JobType[] = ["active", "waiting", "paused", "delayed", "prioritized", "waiting-children"];
/** Job ids read per script: each script holds Redis for the time it takes to list them. */
const RANGE_PAGE = 5_000;

/**
 * Finds tasks that are not terminal but have no live job (a gateway died between commit and
 * enqueue, Redis lost its data, a job exhausted its retries) and enqueues them again. Adding with
 * the task id as job id is a no-op while a job exists, so this is safe to run on every worker.
 * Returns how many tasks were enqueued.
 *
 * A long upstream job's task is untouched while its job is parked, so every run finds every such
 * task again. The queue's live job ids are therefore listed once per run, a few scripts for the
 * whole queue, and only a task missing from that list has its job's state read: a run over
 * thousands of running tasks costs Redis a handful of scripts, not one per task.
 */
export async function reconcileTasks(db: Database, queue: Queue<GenerationJobData>, graceMs: number): Promise<number> {
  const cutoff = new Date(Date.now() - graceMs);
  let enqueued = 0;
  let live: Set<string> | undefined;
  let after = "";
  for (;;) {
    const ids = await findStaleOpenTaskIds(db, { before: cutoff, after, limit: BATCH });
    if (ids.length === 0) return enqueued;
    // Listed only when there is something to check, and after the tasks were found stale: a job
    // listed then was live when the task already was stale, as the per-task read would have seen it.
    const listed = (live ??= await liveJobIds(queue));
    const unlisted = ids.filter((id) => !listed.has(generationJobId(id)));
    // A job can move while the list is read in pages and be missed: its own state decides.
    const states = await Promise.all(unlisted.map((id) => queue.getJobState(generationJobId(id))));
    for (const [i, id] of unlisted.entries()) {
      const state = states[i];
      if (state !== "completed" && state !== "failed" && state !== "unknown") continue;
      if (state !== "unknown") await queue.remove(generationJobId(id)).catch(() => {});
      await queue.add("generate", { taskId: id }, { ...GENERATION_JOB_OPTIONS, jobId: generationJobId(id) });
      enqueued++;
    }
    if (ids.length < BATCH) return enqueued;
    after = ids[ids.length - 1]!;
  }
}

/** The ids of the queue's jobs in a live state, RANGE_PAGE of each state per script. */
async function liveJobIds(queue: Queue<GenerationJobData>): Promise<Set<string>> {
  const live = new Set<string>();
  for (let start = 0; ; start += RANGE_PAGE) {
    const ids = await queue.getRanges(LIVE_STATES, start, start + RANGE_PAGE - 1);
    for (const id of ids) live.add(id);
    // Fewer than a page in all: no state had a full page, so none has more.
    if (ids.length < RANGE_PAGE) return live;
  }
}
