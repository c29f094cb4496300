import { DelayedError, type Job } from "bullmq";
import type { GenerationJobData } from "@gen/queues";
import type { GenerationDeps } from "./generation-deps.ts";
import { generationStep, processGeneration } from "./process-generation.ts";

/**
 * The generation queue's handler: one step per run. While the upstream job runs, the job parks
 * itself as delayed until its next poll (as the delivery worker does), so a concurrency slot is
 * held only while a step runs, never while the upstream works. Parking keeps the job's id and
 * attempt count; a worker that dies with the job parked leaves nothing behind to recover.
 */
export async function runGenerationJob(deps: GenerationDeps, job: Job<GenerationJobData>, token: string | undefined): Promise<void> {
  // Without a lock token (not a worker-fetched job) the job cannot be parked: run it through.
  if (token === undefined) return processGeneration(deps, job.data.taskId);
  const pollAt = await generationStep(deps, job.data.taskId);
  if (pollAt === undefined) return;
  await job.moveToDelayed(pollAt, token);
  throw new DelayedError();
}
