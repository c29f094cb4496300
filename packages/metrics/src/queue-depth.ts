import type { Counter, Gauge } from "prom-client";

/** What a scrape needs of a BullMQ Queue; structural, so this package does not depend on bullmq. */
export interface CountableQueue {
  readonly name: string;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
}

// Asked for explicitly so every queue always exports the same series, zeros included.
export const QUEUE_STATES = ["waiting", "active", "delayed", "prioritized", "waiting-children", "paused", "completed", "failed"] as const;

/**
 * Sets `queue_jobs` from Redis at scrape time. A queue whose counts do not arrive within
 * `timeoutMs` (Redis away or slow) loses its series for this scrape, so a stale depth is never
 * reported as current, and the failure is counted; the scrape itself still answers.
 */
export async function collectQueueDepths(
  gauge: Gauge<"queue" | "state">,
  errors: Counter<"queue">,
  queues: readonly CountableQueue[],
  timeoutMs: number,
): Promise<void> {
  await Promise.all(
    queues.map(async (queue) => {
      try {
        const counts = await withTimeout(queue.getJobCounts(...QUEUE_STATES), timeoutMs);
        for (const state of QUEUE_STATES) gauge.set({ queue: queue.name, state }, counts[state] ?? 0);
      } catch {
        for (const state of QUEUE_STATES) gauge.remove({ queue: queue.name, state });
        errors.inc({ queue: queue.name });
      }
    }),
  );
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
