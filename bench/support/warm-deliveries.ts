import { WEBHOOK_JOB_OPTIONS, webhookJobId, type WebhookJobData } from "@gen/queues";
import type { Queue } from "bullmq";
import type { BenchContext } from "./bench-context.ts";
import { completeTasks, createRunningTasks } from "./bench-tasks.ts";

/**
 * `count` completed tasks to `urls` whose attempt 1 is handed to the worker at once; resolves with
 * the time (performance.now()) from the hand-off to the last POST at the receiver. `started` runs
 * just before the hand-off (a figure's CPU sample starts there).
 */
export async function deliverBurst(
  ctx: BenchContext,
  queue: Queue<WebhookJobData>,
  urls: string | string[],
  count: number,
  started: () => void = () => {},
): Promise<number> {
  const ids = await createRunningTasks(ctx.db, ctx.user.userId, urls, count);
  await completeTasks(ctx.db, ids);
  started();
  const from = performance.now();
  await queue.addBulk(
    ids.map((taskId) => ({ name: "deliver", data: { taskId, attempt: 1 }, opts: { ...WEBHOOK_JOB_OPTIONS, jobId: webhookJobId(taskId, 1) } })),
  );
  const deadline = Date.now() + 120_000;
  while (!ids.every((id) => ctx.receiver.posts.has(id))) {
    if (Date.now() > deadline) throw new Error(`deliveries: ${ids.filter((id) => !ctx.receiver.posts.has(id)).length} of ${count} not received after 120 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return performance.now() - from;
}

/**
 * A burst before a figure is measured: a worker's first burst to a host opens its connections,
 * compiles the attempt's path and runs the cap's refusals for the first time, and cost twice the
 * CPU per delivery of the next burst. Figures are of the steady state.
 */
export async function warmDeliveries(ctx: BenchContext, queue: Queue<WebhookJobData>, urls: string | string[], count: number): Promise<void> {
  await deliverBurst(ctx, queue, urls, count);
}
