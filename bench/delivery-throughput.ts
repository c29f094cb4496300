// Webhook deliveries per second from one worker process against a bare got loop to the same
// keep-alive HTTPS receiver, and dispatch latency (terminal commit → POST at the receiver) with
// tasks finishing at 200 per second.
import { QUEUE_NAMES, WEBHOOK_JOB_OPTIONS, createQueue, createRedis, webhookJobId, type WebhookJobData } from "@gen/queues";
import { enqueueWebhookAttempt } from "@gen/webhook-delivery";
import type { BenchContext } from "./support/bench-context.ts";
import { completeTasks, createRunningTasks } from "./support/bench-tasks.ts";
import { startChild } from "./support/child.ts";
import type { Figure } from "./support/figure.ts";
import { median, percentile } from "./support/load.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not done after ${timeoutMs} ms`);
    await sleep(5);
  }
}

export async function deliveryThroughput(ctx: BenchContext): Promise<Figure[]> {
  const { stack, receiver, db, user } = ctx;
  const concurrency = Number(stack.env.DELIVERY_CONCURRENCY ?? 64);
  const count = ctx.quick ? 600 : 3000;
  const redis = createRedis(stack.env.REDIS_URL!, "request");
  const queue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, stack.env.QUEUE_PREFIX!);

  // Warm-up of both senders (TLS sessions, JIT).
  const warm = await createRunningTasks(db, user.userId, receiver.url, 200);
  await completeTasks(db, warm);
  await queue.addBulk(warm.map((taskId) => ({ name: "deliver", data: { taskId, attempt: 1 }, opts: { ...WEBHOOK_JOB_OPTIONS, jobId: webhookJobId(taskId, 1) } })));
  await waitFor(() => warm.every((id) => receiver.posts.has(id)), 60_000, "warm-up deliveries");
  const gotLoop = async (n: number) => {
    const child = await startChild("bench/support/got-loop.ts", { ...receiver.childEnv, URL: receiver.url, COUNT: String(n), CONCURRENCY: String(concurrency) });
    const { elapsedMs } = (await child.message) as { elapsedMs: number };
    await child.stop();
    return (n / elapsedMs) * 1000;
  };
  await gotLoop(200);

  const worker: number[] = [];
  const baseline: number[] = [];
  const rounds = ctx.quick ? 1 : 2;
  for (let round = 0; round < rounds; round++) {
    const ids = await createRunningTasks(db, user.userId, receiver.url, count);
    await completeTasks(db, ids);
    const started = performance.now();
    await queue.addBulk(ids.map((taskId) => ({ name: "deliver", data: { taskId, attempt: 1 }, opts: { ...WEBHOOK_JOB_OPTIONS, jobId: webhookJobId(taskId, 1) } })));
    await waitFor(() => ids.every((id) => receiver.posts.has(id)), 120_000, "worker deliveries");
    worker.push((count / (performance.now() - started)) * 1000);
    baseline.push(await gotLoop(count));
  }

  // Dispatch latency: tasks reach their terminal state at 200/s, each handed off as the generation
  // worker does (terminal commit, then attempt 1 enqueued).
  const rate = 200;
  const seconds = ctx.quick ? 3 : 10;
  const ids = await createRunningTasks(db, user.userId, receiver.url, rate * seconds);
  const finishedAt = new Map<string, number>();
  const begin = performance.now() + 50;
  await Promise.all(
    ids.map(async (id, i) => {
      await sleep(begin + (i * 1000) / rate - performance.now());
      const at = new Date();
      await completeTasks(db, [id], at);
      finishedAt.set(id, at.getTime());
      await enqueueWebhookAttempt(queue, id, 1, 0);
    }),
  );
  await waitFor(() => ids.every((id) => receiver.posts.has(id)), 60_000, "dispatch deliveries");
  const lags = ids.map((id) => receiver.posts.get(id)![0]!.at - finishedAt.get(id)!);
  const duplicates = ids.filter((id) => receiver.posts.get(id)!.length > 1).length;
  redis.disconnect();

  const value = median(worker);
  const base = median(baseline);
  const lagMedian = median(lags);
  const lagP99 = percentile(lags, 99);
  return [
    { name: "webhook deliveries (one worker process)", value, unit: "/s", baseline: base, ratio: value / base, target: "ratio >= 0.6", pass: value / base >= 0.6, note: `${count} deliveries per round, ${rounds} rounds, concurrency ${concurrency} both sides; worker ${worker.map((v) => v.toFixed(0)).join("/")}, got ${baseline.map((v) => v.toFixed(0)).join("/")}` },
    { name: `dispatch latency median at ${rate} tasks/s`, value: lagMedian, unit: "ms", target: "<= 5 ms", pass: lagMedian <= 5, note: `${ids.length} tasks over ${seconds} s, ${duplicates} duplicates` },
    { name: `dispatch latency p99 at ${rate} tasks/s`, value: lagP99, unit: "ms", target: "<= 30 ms", pass: lagP99 <= 30, note: `max ${Math.max(...lags)} ms` },
  ];
}
