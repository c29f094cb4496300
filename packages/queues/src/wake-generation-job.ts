import { ErrorCode, Job, type Queue } from "bullmq";
import { generationJobId, type GenerationJobData } from "./job-types.ts";

/**
 * Makes a task's parked generation job (delayed until its next poll, or waiting for a concurrency
 * slot) run now; true when it was parked. A job that is not delayed (running, already waiting) or
 * gone (the task finished) is left as it is, so waking a task twice, or a finished one, costs
 * nothing more than this one round trip. Redis errors are thrown.
 */
export async function wakeGenerationJob(queue: Queue<GenerationJobData>, taskId: string): Promise<boolean> {
  // A handle on the job by its id (no read of its hash first): promoting needs only the id.
  const job = new Job<GenerationJobData>(queue, "generate", { taskId }, {}, generationJobId(taskId));
  try {
    await job.promote();
    return true;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === ErrorCode.JobNotInState || code === ErrorCode.JobNotExist) return false;
    throw error;
  }
}
