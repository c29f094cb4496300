import { WEBHOOK_JOB_OPTIONS, webhookJobId, type WebhookJobData } from "@gen/queues";
import type { Queue } from "bullmq";
import type { BenchContext } from "./bench-context.ts";
import { completeTasks, createRunningTasks } from "./bench-tasks.ts";

/**
 * `count` completed tasks' attempt 1 handed to the worker and awaited at the receiver, before a
 * figure is measured: a worker's first burst to a host opens its connections, compiles the attempt's
 * path and runs the cap's refusals for the first time, and cost twice the CPU per delivery of the
 * next burst. Figures are of the steady state.
 */
export async function warmDeliveries(ctx: BenchContext, queue: Queue<WebhookJobData>, urls: string | string[], count: number): Promise<void> {
  const ids = await createRunningTasks(ctx.db, ctx.user.userId, urls, count);
  await completeTasks(ctx.db, ids);
  await queue.addBulk(
    ids.map((taskId) => ({ name: "deliver", data: { taskId, attempt: 1 }, opts: { ...WEBHOOK_JOB_OPTIONS, jobId: webhookJobId(taskId, 1) } })),
  );
  const deadline = Date.now() + 60_000;
  while (!ids.every((id) => ctx.receiver.posts.has(id))) {
    if (Date.now() > deadline) throw new Error("warm-up deliveries: not all received after 60 s");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
