// Webhook deliveries per second with 1, 2 and 4 worker processes against a receiver that answers
// every POST after 200 ms: I/O-bound, so the figure shows whether concurrency and processes scale.
import { QUEUE_NAMES, WEBHOOK_JOB_OPTIONS, createQueue, webhookJobId, type WebhookJobData } from "@gen/queues";
import { startApp } from "../test/faults/support/app-process.ts";
import { completeTasks, createRunningTasks } from "./support/bench-tasks.ts";
import type { Figure } from "./support/figure.ts";
import { cpuPerUnit, sampleCpu } from "./support/proc-cpu.ts";
import type { ScaleContext } from "./support/scale-context.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function scaleDeliveries(ctx: ScaleContext, processCounts: number[]): Promise<Figure[]> {
  const { stack, receiver, db, user, redis } = ctx;
  const concurrency = Number(stack.env.DELIVERY_CONCURRENCY);
  const queue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, stack.env.QUEUE_PREFIX!);
  const enqueue = async (ids: string[]) => {
    for (let i = 0; i < ids.length; i += 5_000) {
      await queue.addBulk(
        ids
          .slice(i, i + 5_000)
          .map((taskId) => ({ name: "deliver", data: { taskId, attempt: 1 }, opts: { ...WEBHOOK_JOB_OPTIONS, jobId: webhookJobId(taskId, 1) } })),
      );
    }
  };
  // Done when every delivery's attempt 1 has finished, whatever its outcome: an attempt that
  // fails waits WEBHOOK_RETRY_DELAY_MS for the next one, which is not throughput.
  const attemptedOnce = async (ids: string[], timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rows = await db.$sql.rows<{ outcome: string; n: number }>`
        SELECT outcome, count(*)::int AS n FROM webhook_attempts WHERE attempt_no = 1 AND finished_at IS NOT NULL AND task_id = ANY(${ids}) GROUP BY outcome`;
      const done = rows.reduce((sum, row) => sum + row.n, 0);
      if (done >= ids.length) return Object.fromEntries(rows.map((row) => [row.outcome, row.n]));
      if (Date.now() > deadline) throw new Error(`deliveries: ${ids.length - done} of ${ids.length} attempts not finished after ${timeoutMs} ms`);
      await sleep(200);
    }
  };

  const figures: Figure[] = [];
  let single: number | undefined;
  for (const n of processCounts) {
    const workers = await Promise.all(
      Array.from({ length: n }, (_, k) => startApp("worker", { ...stack.env, LOG_LEVEL: "info" }, `scale-worker-${n}-${k + 1}`)),
    );
    // Warm-up: TLS sessions to the receiver and the JIT, in every process.
    const warm = await createRunningTasks(db, user.userId, receiver.url, 50 * n);
    await completeTasks(db, warm);
    await enqueue(warm);
    await attemptedOnce(warm, 120_000);

    const count = (ctx.quick ? 300 : 1500) * n;
    const ids = await createRunningTasks(db, user.userId, receiver.url, count);
    await completeTasks(db, ids);
    const stop = sampleCpu({ worker: () => workers.map((w) => w.child.pid!), ...ctx.sharedGroups });
    await enqueue(ids);
    const outcomes = await attemptedOnce(ids, 600_000);
    const sample = stop();
    const failed = Object.entries(outcomes).filter(([outcome]) => outcome !== "delivered");
    // A failed attempt's reason is in the worker's log (info), not in the database.
    const reasons = new Set(workers.flatMap((w) => [...w.tail().matchAll(/"detail":"([^"]{0,100})/g)].map((m) => m[1]!)));
    await Promise.all(workers.map((w) => w.kill("SIGTERM")));

    const rate = (count / sample.wallMs) * 1000;
    single ??= rate;
    const bound = (n * concurrency * 1000) / ctx.receiverMs;
    figures.push({
      name: `deliveries, ${n} worker process${n > 1 ? "es" : ""}, receiver ${ctx.receiverMs} ms`,
      value: rate,
      unit: "/s",
      baseline: single,
      ratio: rate / single,
      note: `${count} first attempts (${failed.length === 0 ? "all delivered" : `not delivered: ${failed.map(([o, n]) => `${n} ${o}`).join(", ")}; ${[...reasons].slice(0, 3).join(" | ")}`}), DELIVERY_CONCURRENCY ${concurrency} per process (I/O bound ${bound.toFixed(0)}/s, ${((rate / bound) * 100).toFixed(0)} % of it); ${cpuPerUnit(sample, count)} (worker = all ${n} together)`,
    });
  }
  await queue.close();
  return figures;
}
