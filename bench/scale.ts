// `pnpm bench:scale`: deliveries/s with 1, 2 and 4 worker processes against a
// receiver that answers after 200 ms, and generations/s against WORKER_CONCURRENCY with a slow
// simulated upstream; CPU per delivery/generation of every process next to each figure.
// BENCH_QUICK=1 for a short run. Needs root (the receiver listens on :443).
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "./support/child.ts";
import { table, type Figure } from "./support/figure.ts";
import { createScaleContext } from "./support/scale-context.ts";
import { scaleDeliveries } from "./scale-deliveries.ts";
import { scaleGenerations } from "./scale-generations.ts";
import { queueMemory } from "./scale-queue-memory.ts";

const quick = process.env.BENCH_QUICK === "1";
const RECEIVER_MS = 200;
const UPSTREAM_MS = quick ? 500 : 1000;
const log = (message: string) => process.stdout.write(`[${new Date().toISOString()}] ${message}\n`);

const loadBefore = os.loadavg();
const ctx = await createScaleContext(quick, RECEIVER_MS);
const figures: Figure[] = [];
try {
  for (const [name, run] of [
    ["deliveries against worker processes", () => scaleDeliveries(ctx, [1, 2, 4])],
    ["generations against WORKER_CONCURRENCY", () => scaleGenerations(ctx, [4, 16, 64], UPSTREAM_MS)],
    ["Redis memory per queued job", () => queueMemory(ctx)],
  ] as const) {
    log(`${name}...`);
    const got = await run();
    for (const f of got) log(`  ${f.name}: ${f.value.toFixed(1)} ${f.unit}${f.ratio === undefined ? "" : ` (×${f.ratio.toFixed(2)})`}; ${f.note}`);
    figures.push(...got);
  }
} finally {
  await ctx.close();
}
const result = {
  date: new Date().toISOString(),
  quick,
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, loadavg_before: loadBefore, loadavg_after: os.loadavg() },
  figures,
};
process.stdout.write(
  `\n${table(figures)}\n\nratio: against the first row of its group in the same run; load average before ${loadBefore.map((l) => l.toFixed(2)).join(" ")}, after ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}; ${os.cpus().length} CPUs\n`,
);
for (const f of figures) if (f.note) process.stdout.write(`- ${f.name}: ${f.note}\n`);
const dir = path.join(REPO_ROOT, "bench/results");
mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, "scale-latest.json"), `${JSON.stringify(result, null, 2)}\n`);
process.exit(0);
