import type { Queue } from "bullmq";
import { findStaleOpenTaskIds, type Database } from "@gen/db";
import { GENERATION_JOB_OPTIONS, generationJobId, type GenerationJobData } from "@gen/queues";

const BATCH = 500;

/**
 * Finds tasks that are not terminal but have no live job (a gateway died between commit and
 * enqueue, Redis lost its data, a job exhausted its retries) and enqueues them again. Adding with
 * the task id as job id is a no-op while a job exists, so this is safe to run on every worker.
 * Returns how many tasks were enqueued.
 */
export async function reconcileTasks(db: Database, queue: Queue<GenerationJobData>, graceMs: number): Promise<number> {
  const cutoff = new Date(Date.now() - graceMs);
  let enqueued = 0;
  let after = "";
  for (;;) {
    const ids = await findStaleOpenTaskIds(db, { before: cutoff, after, limit: BATCH });
    // The state alone (one script, no read of the job's hash): a long upstream job's task is
    // untouched while its job is parked, so every run looks at every such task again. The page's
    // scripts go out together: one wait for Redis per page, not one per task.
    const states = await Promise.all(ids.map((id) => queue.getJobState(generationJobId(id))));
    for (const [i, id] of ids.entries()) {
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
