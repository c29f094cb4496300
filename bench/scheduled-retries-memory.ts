// Memory with 50,000 scheduled retries: delayed attempt-2 jobs in BullMQ (and their rows in
// PostgreSQL), Redis used_memory per job, and the RSS of a real worker process holding them.
import { randomBytes } from "node:crypto";
import { QUEUE_NAMES, WEBHOOK_JOB_OPTIONS, createQueue, createRedis, webhookJobId, type WebhookJobData } from "@gen/queues";
import { startApp } from "../test/faults/support/app-process.ts";
import type { BenchContext } from "./support/bench-context.ts";
import { createRunningTasks } from "./support/bench-tasks.ts";
import { rssBytes } from "./support/child.ts";
import type { Figure } from "./support/figure.ts";
import { deleteKeysUnder } from "../test/support/redis-keys.ts";

async function usedMemory(redis: ReturnType<typeof createRedis>): Promise<number> {
  const info = await redis.info("memory");
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

export async function scheduledRetriesMemory(ctx: BenchContext): Promise<Figure[]> {
  const count = ctx.quick ? 10_000 : 50_000;
  const prefix = `bench_mem_${randomBytes(4).toString("hex")}`;
  const redis = createRedis(ctx.stack.env.REDIS_URL!, "request");
  const queue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, prefix);
  let worker: Awaited<ReturnType<typeof startApp>> | undefined;
  let measured: { before: number; after: number; delayed: number; rss: number };
  try {
    await queue.waitUntilReady();
    const ids = await createRunningTasks(ctx.db, ctx.user.userId, ctx.receiver.url, count);
    const before = await usedMemory(redis);
    for (let i = 0; i < ids.length; i += 5_000) {
      await queue.addBulk(
        ids.slice(i, i + 5_000).map((taskId) => ({
          name: "deliver",
          data: { taskId, attempt: 2 },
          opts: { ...WEBHOOK_JOB_OPTIONS, jobId: webhookJobId(taskId, 2), delay: 3_600_000 },
        })),
      );
    }
    const after = await usedMemory(redis);
    const delayed = await queue.getDelayedCount();
    worker = await startApp("worker", { ...ctx.stack.env, QUEUE_PREFIX: prefix }, "memory-worker");
    await new Promise((resolve) => setTimeout(resolve, ctx.quick ? 3_000 : 8_000));
    measured = { before, after, delayed, rss: await rssBytes(worker.child.pid!) };
  } finally {
    await worker?.kill("SIGTERM");
    await queue.close();
    // Every key under the prefix (the jobs, and the worker's own queues and schedulers), also on
    // failure: obliterate leaves the worker's queues, and the Redis is shared.
    await deleteKeysUnder(redis, prefix);
    redis.disconnect();
  }
  const { before, after, delayed, rss } = measured;
  const perJob = (after - before) / count;
  return [
    {
      name: `worker RSS with ${count} scheduled retries`,
      value: rss / 1024 / 1024,
      unit: "MB",
      target: "< 200 MB",
      pass: rss < 200 * 1024 * 1024,
      note: `RSS of a worker process 8 s after start`,
    },
    {
      name: "Redis memory per scheduled retry",
      value: perJob,
      unit: "B",
      target: "< 2048 B",
      pass: perJob < 2048,
      note: `${delayed} delayed jobs, used_memory +${((after - before) / 1e6).toFixed(1)} MB`,
    },
  ];
}
