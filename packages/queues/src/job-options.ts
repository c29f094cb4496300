import type { JobsOptions } from "bullmq";

// Retries here cover crashes and transient infrastructure errors only; workflow failures are
// terminal task states written by the handler, not job failures.
export const GENERATION_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: "exponential", delay: 1000 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

// The delivery schedule (attempts 1-3) is ours, not BullMQ's: each attempt is its own job.
export const WEBHOOK_JOB_OPTIONS: JobsOptions = {
  attempts: 1,
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

// A failed periodic run is not retried: the next interval's run does the same work.
export const MAINTENANCE_JOB_OPTIONS: JobsOptions = {
  attempts: 1,
  removeOnComplete: { count: 100 },
  removeOnFail: { count: 100 },
};
