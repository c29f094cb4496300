import { Worker } from "bullmq";
import type { RedisClient as Redis } from "@gen/queues";
import { QUEUE_NAMES, createUpstreamSlots, type GenerationJobData } from "@gen/queues";
import { queueTelemetry } from "@gen/tracing";
import type { GenerationDeps } from "./generation-deps.ts";
import { runGenerationJob } from "./run-generation-job.ts";

/**
 * `concurrency` bounds the steps running at once, not the tasks in flight: a task waiting for its
 * upstream is a delayed job (see run-generation-job.ts). A SIGKILLed worker's running step is
 * re-run by another worker once its lock (JOB_LOCK_MS) expires.
 */
export function createGenerationWorker(given: GenerationDeps, connection: Redis): Worker<GenerationJobData> {
  // Caps and callback marks on the worker's own connection unless the caller brought its own.
  const deps: GenerationDeps = {
    ...given,
    redis: given.redis ?? connection,
    upstreamSlots: given.upstreamSlots ?? createUpstreamSlots(connection, given.config.queuePrefix),
  };
  const worker = new Worker<GenerationJobData>(QUEUE_NAMES.generation, (job, token) => runGenerationJob(deps, job, token), {
    connection,
    prefix: deps.config.queuePrefix,
    concurrency: deps.config.workerConcurrency,
    lockDuration: deps.config.jobLockMs,
    stalledInterval: deps.config.jobLockMs,
    maxStalledCount: 10,
    // Each step runs under the trace of the request that submitted its task (when tracing).
    telemetry: queueTelemetry(),
  });
  // The step has logged the failure already, naming the task and its request (process-generation.ts).
  worker.on("failed", (job, error) =>
    deps.logger.debug("generation job failed; BullMQ retries it", { task_id: job?.data.taskId, attempt: job?.attemptsMade, err: error }),
  );
  worker.on("error", (error) => deps.logger.error("generation worker error", { err: error }));
  return worker;
}
