import { Worker } from "bullmq";
import type { RedisClient as Redis } from "@gen/queues";
import { QUEUE_NAMES, type GenerationJobData } from "@gen/queues";
import type { GenerationDeps } from "./generation-deps.ts";
import { processGeneration } from "./process-generation.ts";

/** A SIGKILLed worker's job is re-run by another worker once its lock (JOB_LOCK_MS) expires. */
export function createGenerationWorker(deps: GenerationDeps, connection: Redis): Worker<GenerationJobData> {
  const worker = new Worker<GenerationJobData>(QUEUE_NAMES.generation, (job) => processGeneration(deps, job.data.taskId), {
    connection,
    prefix: deps.config.queuePrefix,
    concurrency: deps.config.workerConcurrency,
    lockDuration: deps.config.jobLockMs,
    stalledInterval: deps.config.jobLockMs,
    maxStalledCount: 10,
  });
  worker.on("failed", (job, error) => deps.logger.warn("generation job failed; BullMQ retries it", { task_id: job?.data.taskId, attempt: job?.attemptsMade, err: error }));
  worker.on("error", (error) => deps.logger.error("generation worker error", { err: error }));
  return worker;
}
