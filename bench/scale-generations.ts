// Generations per second against WORKER_CONCURRENCY, one worker process, with a slow simulated
// upstream (every job takes UPSTREAM_MS there). Measured from the tasks' own timestamps (first
// started_at to last finished_at), so it holds whether a generation holds a worker slot while the
// upstream works or hands the wait to delayed poll jobs.
import { startApp } from "../test/faults/support/app-process.ts";
import { submitMany } from "../test/faults/support/load.ts";
import type { Figure } from "./support/figure.ts";
import { cpuPerUnit, sampleCpu } from "./support/proc-cpu.ts";
import type { ScaleContext } from "./support/scale-context.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function scaleGenerations(ctx: ScaleContext, concurrencies: number[], upstreamMs: number): Promise<Figure[]> {
  const { stack, db, user } = ctx;
  const figures: Figure[] = [];
  let first: number | undefined;
  for (const concurrency of concurrencies) {
    const count = ctx.quick ? Math.max(24, concurrency * 3) : Math.max(60, concurrency * 6);
    // Queued with no worker running; the worker then finds them all waiting.
    const ids = await submitMany(stack, user.auth, count, (i) => ({ model: "sim-detect-1", text: `scale ${concurrency} ${i} [[sim:delay_ms=${upstreamMs}]]` }));
    const worker = await startApp("worker", { ...stack.env, WORKER_CONCURRENCY: String(concurrency) }, `scale-generation-${concurrency}`);
    const stop = sampleCpu({ worker: () => [worker.child.pid!], ...ctx.sharedGroups });
    const deadline = Date.now() + 600_000;
    let span: { first: Date; last: Date; failed: number } | undefined;
    for (;;) {
      const [row] = await db.$sql.rows<{ open: number; failed: number; first: Date; last: Date }>`
        SELECT count(*) FILTER (WHERE status NOT IN ('completed', 'failed'))::int AS open, count(*) FILTER (WHERE status = 'failed')::int AS failed,
               min(started_at) AS first, max(finished_at) AS last
          FROM tasks WHERE id = ANY(${ids})`;
      if (row!.open === 0) {
        span = row!;
        break;
      }
      if (Date.now() > deadline) throw new Error(`generations: ${row!.open} of ${count} still open after 600 s`);
      await sleep(100);
    }
    const sample = stop();
    await worker.kill("SIGTERM");
    const seconds = (span.last.getTime() - span.first.getTime()) / 1000;
    const rate = count / seconds;
    first ??= rate;
    const bound = (concurrency * 1000) / upstreamMs;
    figures.push({
      name: `generations, WORKER_CONCURRENCY ${concurrency}, upstream ${upstreamMs} ms`,
      value: rate,
      unit: "/s",
      baseline: first,
      ratio: rate / first,
      note: `${count} sim-detect-1 tasks (${span.failed} failed) on one worker process; one slot per running generation would allow ${bound.toFixed(1)}/s; ${cpuPerUnit(sample, count)}`,
    });
  }
  return figures;
}
