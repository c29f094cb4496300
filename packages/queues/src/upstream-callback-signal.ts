import type { Queue } from "bullmq";
import type { RedisClient } from "./create-redis.ts";
import type { GenerationJobData } from "./job-types.ts";
import { wakeGenerationJob } from "./wake-generation-job.ts";

/**
 * An upstream's callback only says "poll this task now". Waking its parked job does that, except
 * while a step of the task runs (the job is active then, and cannot be promoted): that step polls
 * with the callback's news only if the callback came before its poll, and then parks until the
 * next safety poll. So the gateway leaves a mark before it wakes the job; a step clears the mark
 * before it polls (its poll then sees whatever a cleared callback announced) and takes it after
 * parking its job, waking the job again when one was left meanwhile. Either the gateway finds the
 * job parked, or the worker finds the mark: no callback waits for a safety poll, and one callback
 * costs one poll at most.
 */
const markKey = (prefix: string, taskId: string) => `${prefix}:upstream-callback:{${taskId}}`;

// Longer than any step runs (a step ends within JOB_LOCK_MS or is re-run); a mark is a few bytes.
const MARK_TTL_MS = 10 * 60_000;

/** The gateway's side: marks the task and wakes its job; true when the job was parked. */
export async function signalUpstreamCallback(redis: RedisClient, queue: Queue<GenerationJobData>, prefix: string, taskId: string): Promise<boolean> {
  await redis.set(markKey(prefix, taskId), "1", "PX", MARK_TTL_MS);
  return wakeGenerationJob(queue, taskId);
}

/** Before a step's poll: the poll answers every callback so far. */
export async function clearUpstreamCallback(redis: RedisClient, prefix: string, taskId: string): Promise<void> {
  await redis.del(markKey(prefix, taskId));
}

/** After the step parked its job: whether a callback came while it ran (the mark is taken). */
export async function takeUpstreamCallback(redis: RedisClient, prefix: string, taskId: string): Promise<boolean> {
  return (await redis.getdel(markKey(prefix, taskId))) !== null;
}
