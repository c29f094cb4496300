import { startApp, type AppProcess } from "../../test/faults/support/app-process.ts";
import type { BenchContext } from "./bench-context.ts";

/**
 * Runs `work` with the stack's worker replaced by one of its own, started with `env` on top of the
 * stack's (a figure that needs a different setting); the stack's worker comes back after.
 */
export async function withOwnWorker<T>(ctx: BenchContext, env: Record<string, string>, label: string, work: (worker: AppProcess) => Promise<T>): Promise<T> {
  await Promise.all([...ctx.stack.workers].map((w) => w.kill("SIGTERM")));
  const worker = await startApp("worker", { ...ctx.stack.env, ...env }, label);
  try {
    return await work(worker);
  } finally {
    await worker.kill("SIGTERM");
    await ctx.stack.startWorker();
  }
}

/**
 * One receiver host stands for many customers in these figures: its per-host cap
 * (WEBHOOK_HOST_CONCURRENCY, default 32 in flight, the others parked) raised out of the way.
 */
export const UNCAPPED_HOST = { WEBHOOK_HOST_CONCURRENCY: "100000" };
