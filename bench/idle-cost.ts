// CPU of a gateway and a worker with nothing to do (ms per second, from /proc): what every process
// of a fleet costs before it does any work, at the shipped timings (lock renewal, stalled checks,
// maintenance schedulers, metrics sampling). Both run on a database and QUEUE_PREFIX of their own;
// they settle first (start-up compiles and collects), then are measured. Alone, compiled as
// `pnpm bench` runs them: `pnpm build && RUN_COMPILED_APPS=1 pnpm exec tsx --conditions=@gen/source bench/idle-cost.ts`.
import { fileURLToPath } from "node:url";
import { startFaultStack } from "../test/faults/support/fault-stack.ts";
import { createScratchDatabase } from "../test/support/scratch-database.ts";
import { measureBarePostCpu } from "./support/bare-post-unit.ts";
import { cpuColumns, table, withUnits, type Figure } from "./support/figure.ts";
import { sampleCpu } from "./support/proc-cpu.ts";

// The shipped defaults of what wakes an idle process (the fault stack's are shorter).
const SHIPPED_TIMINGS = {
  JOB_LOCK_MS: "30000",
  RECONCILE_INTERVAL_MS: "15000",
  WEBHOOK_TIMEOUT_MS: "10000",
  WEBHOOK_RETRY_DELAY_MS: "40000",
  WEBHOOK_FINAL_ATTEMPT_MS: "300000",
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function idleCost(options: { quick: boolean }): Promise<Figure[]> {
  // V8's memory reducer collects the start-up garbage some 25 s after start: settled means after it.
  const settleMs = 30_000;
  const measureMs = options.quick ? 10_000 : 30_000;
  process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/gen";
  const database = await createScratchDatabase();
  const stack = await startFaultStack({
    databaseUrl: database.url,
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    env: { ...SHIPPED_TIMINGS, LOG_LEVEL: "error" },
  });
  try {
    await sleep(settleMs);
    const stop = sampleCpu({ gateway: () => [stack.gateway.child.pid!], worker: () => [stack.workers[0]!.child.pid!] });
    await sleep(measureMs);
    const sample = stop();
    const seconds = sample.wallMs / 1000;
    const note = `CPU over ${seconds.toFixed(0)} s after ${settleMs / 1000} s of settling, shipped timings; units: bare-POST CPU per second idle`;
    return (["gateway", "worker"] as const).map((name) => ({
      name: `idle ${name}: CPU per second`,
      value: sample.ms[name]! / seconds,
      unit: "ms",
      cpu: cpuColumns({ [name]: sample.ms[name]! / seconds }),
      note,
    }));
  } finally {
    await stack.close();
    await database.drop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const bare = await measureBarePostCpu();
  const figures = withUnits(await idleCost({ quick: process.env.BENCH_QUICK === "1" }), bare);
  process.stdout.write(`${table(figures)}\n\nunit: bare Express POST ${bare.toFixed(3)} ms of its process's CPU\n`);
  for (const f of figures) if (f.note) process.stdout.write(`- ${f.name}: ${f.note}\n`);
  process.exit(0);
}
