import { startApp } from "../../test/faults/support/app-process.ts";
import type { FaultStack } from "../../test/faults/support/fault-stack.ts";

/**
 * BENCH_WORKER_CPU_PROF=<dir>: the stack's worker is replaced by one under `node --cpu-prof`, its
 * profile written to <dir> when it stops (the profiler adds its own CPU: measure without it).
 * Returns what stops it with SIGTERM (the profile is written only then), or undefined unprofiled.
 */
export async function profileWorkerIfAsked(stack: FaultStack): Promise<(() => Promise<void>) | undefined> {
  const dir = process.env.BENCH_WORKER_CPU_PROF;
  if (!dir) return undefined;
  await stack.workers[0]!.kill("SIGTERM");
  const worker = await startApp("worker", stack.env, "worker-profiled", ["--cpu-prof", "--cpu-prof-dir", dir]);
  stack.workers.push(worker);
  return () => worker.kill("SIGTERM");
}
