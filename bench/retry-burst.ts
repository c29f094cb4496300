// 10,000 webhook retries (attempt 2) falling due within the same second on one worker process:
// how long until the last one reached the receiver, and each one's lateness (POST at the receiver
// minus its own due time). The deliveries are written as attempt 1 would have left them (failed
// with a 500, attempt 2 due) and their delayed jobs enqueued before the second comes.
import { newTaskId } from "@gen/ids";
import { QUEUE_NAMES, WEBHOOK_JOB_OPTIONS, createQueue, createRedis, webhookJobId, type WebhookJobData } from "@gen/queues";
import type { BenchContext } from "./support/bench-context.ts";
import { cpuColumns, type Figure } from "./support/figure.ts";
import { percentile } from "./support/load.ts";
import { UNCAPPED_HOST, withOwnWorker } from "./support/own-worker.ts";
import { CpuTally, sampleCpu } from "./support/proc-cpu.ts";
import { warmDeliveries } from "./support/warm-deliveries.ts";

const CHUNK = 2_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

export async function retryBurst(ctx: BenchContext): Promise<Figure[]> {
  const count = ctx.quick ? 2_000 : 10_000;
  // The one receiver host's cap would be what the figure measures: this worker runs with it raised.
  return withOwnWorker(ctx, UNCAPPED_HOST, "worker-burst", (worker) => burst(ctx, worker.child.pid!, count));
}

async function burst(ctx: BenchContext, workerPid: number, count: number): Promise<Figure[]> {
  const { stack, receiver, db, user } = ctx;
  const redis = createRedis(stack.env.REDIS_URL!, "request");
  const queue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, stack.env.QUEUE_PREFIX!);
  try {
    // A fresh worker process: its first burst would be its warm-up (see warm-deliveries.ts).
    await warmDeliveries(ctx, queue, receiver.url, 1_000);
    const ids = Array.from({ length: count }, () => newTaskId());
    // Far enough ahead for the rows and the jobs to be in place; due times spread over one second.
    const second = Math.ceil((Date.now() + (ctx.quick ? 10_000 : 25_000)) / 1000) * 1000;
    const dueOf = (i: number) => second + Math.floor((i * 1000) / count);
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      const due = chunk.map((_, k) => new Date(dueOf(i + k)));
      await db.$sql.query(
        `WITH rows AS (SELECT * FROM unnest($1::text[], $2::timestamptz[]) AS r(id, due)),
              task AS (INSERT INTO tasks (id, user_id, endpoint, model, status, input, output, webhook_url, request_id, billing_method, reserved_credits, charged_credits, refunded_credits, created_at, started_at, finished_at)
                       SELECT id, $3, 'images', 'sim-image-1', 'completed', '{"prompt":"bench"}', jsonb_build_object('image_urls', jsonb_build_array('https://cdn.bench.example/' || id || '/0.png')), $4,
                              'req_000000000000000000000000', 'flat', 4, 4, 0, due - interval '42 seconds', due - interval '41 seconds', due - interval '40 seconds' FROM rows),
              delivery AS (INSERT INTO webhook_deliveries (task_id, url, status, attempts, response_status, last_error, last_attempt_at, updated_at, next_attempt_at)
                           SELECT id, $4, 'in_progress', 1, 500, 'http_500', due - interval '40 seconds', due - interval '40 seconds', due FROM rows)
         INSERT INTO webhook_attempts (id, task_id, attempt_no, started_at, finished_at, outcome, response_status, duration_ms)
         SELECT 'whd_' || left(md5(id), 24), id, 1, due - interval '40 seconds', due - interval '40 seconds' + interval '5 milliseconds', 'http_500', 500, 5 FROM rows`,
        [chunk, due, user.userId, receiver.url],
      );
      await queue.addBulk(
        chunk.map((taskId, k) => ({
          name: "deliver",
          data: { taskId, attempt: 2 },
          opts: { ...WEBHOOK_JOB_OPTIONS, jobId: webhookJobId(taskId, 2), delay: dueOf(i + k) - Date.now() },
        })),
      );
    }
    if (Date.now() > second - 500) throw new Error("retry burst: the set-up ran into the due second; give it more lead time");
    await sleep(second - Date.now());
    const cpu = new CpuTally();
    const stop = sampleCpu({ worker: () => [workerPid], ...ctx.sharedGroups });
    const deadline = Date.now() + 180_000;
    while (ids.some((id) => !receiver.posts.has(id))) {
      if (Date.now() > deadline) throw new Error(`retry burst: ${ids.filter((id) => !receiver.posts.has(id)).length} of ${count} not received after 180 s`);
      await sleep(20);
    }
    cpu.add(stop(), count);
    const lateness = ids.map((id, i) => receiver.posts.get(id)![0]!.at - dueOf(i));
    const lastAfterS = (Math.max(...ids.map((id) => receiver.posts.get(id)![0]!.at)) - second) / 1000;
    const duplicates = ids.filter((id) => receiver.posts.get(id)!.length > 1).length;
    const name = `${count.toLocaleString("en-US")} retries due in one second (one worker)`;
    return [
      {
        name: `${name}: last received after`,
        value: lastAfterS,
        unit: "s",
        target: "<= 10 s; CPU per scheduled retry <= 4 units",
        pass: lastAfterS <= 10,
        cpu: cpuColumns(cpu.perUnit()),
        unitsTarget: 4,
        note: `attempt 2 of ${count} deliveries, due times spread over one second; WEBHOOK_HOST_CONCURRENCY raised (one receiver host stands for many); ${duplicates} duplicates`,
      },
      {
        name: `${name}: lateness p99`,
        value: percentile(lateness, 99),
        unit: "ms",
        note: `p50 ${percentile(lateness, 50).toFixed(0)} ms, max ${Math.max(...lateness).toFixed(0)} ms (POST at the receiver minus the attempt's own due time)`,
      },
    ];
  } finally {
    redis.disconnect();
  }
}
