// CPU of a gateway and a worker with nothing to do (ms per second, from /proc): what every process
// of a fleet costs before it does any work, at the shipped timings (lock renewal, stalled checks,
// maintenance schedulers, metrics sampling). Both run on a database and QUEUE_PREFIX of their own;
// they settle first (start-up compiles and collects), then are measured. Alone, compiled as
// `pnpm bench` runs them: `pnpm build && RUN_COMPILED_APPS=1 pnpm exec tsx --conditions=@gen/source bench/idle-cost.ts`.
import { fileURLToPath } from "node:url";
import { startFaultStack } from "../test/faults/support/fault-stack.ts";
import { createScratchDatabase } from "../test/support/scratch-database.ts";
import { cpuColumns, type Figure } from "./support/figure.ts";
import { sampleCpu } from "./support/proc-cpu.ts";
import { runAlone } from "./support/run-alone.ts";
import { SHIPPED_TIMINGS } from "./support/shipped-timings.ts";

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

if (process.argv[1] === fileURLToPath(import.meta.url)) await runAlone(idleCost);
