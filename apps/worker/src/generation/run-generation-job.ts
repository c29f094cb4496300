import { DelayedError, type Job } from "bullmq";
import type { GenerationJobData } from "@gen/queues";
import type { GenerationDeps } from "./generation-deps.ts";
import { generationStep, processGeneration } from "./process-generation.ts";

/**
 * The generation queue's handler: one step per run. While the upstream job runs, or the task waits
 * for an upstream slot, the job parks itself as delayed until its next step (as the delivery worker
 * does), so a concurrency slot is held only while a step runs, never while the upstream works.
 * Parking keeps the job's id and attempt count; a worker that dies with the job parked leaves
 * nothing behind to recover. What the step left for after the park (joining a waiting list, a
 * callback's mark) runs once the job is delayed, so a wake-up (a promote) cannot miss it.
 */
export async function runGenerationJob(deps: GenerationDeps, job: Job<GenerationJobData>, token: string | undefined): Promise<void> {
  // Without a lock token (not a worker-fetched job) the job cannot be parked: run it through.
  if (token === undefined) return processGeneration(deps, job.data.taskId);
  // Every run of the job, the first included, counts in attemptsStarted (parked runs too).
  const next = await generationStep(deps, job.data.taskId, job.attemptsStarted <= 1);
  if (next === undefined) return;
  await job.moveToDelayed(next.at, token);
  // The job is parked already: a failure here must not fail it. It only delays the step to `at`.
  await next.afterParked?.().catch((error: unknown) => deps.logger.warn("after parking a generation job", { task_id: job.data.taskId, err: error }));
  throw new DelayedError();
}
