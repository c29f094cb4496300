// `pnpm bench`: every figure with its baselines from the same run, printed as a table and
// written to bench/results/latest.json. BENCH_QUICK=1 for a short smoke run. Needs root (the
// webhook receiver listens on :443, as a submitted webhook_url cannot name a port).
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createBenchContext } from "./support/bench-context.ts";
import { REPO_ROOT } from "./support/child.ts";
import { cpuColumns, table, withUnits, type Figure } from "./support/figure.ts";
import { deliveryThroughput } from "./delivery-throughput.ts";
import { measureBarePostCpu } from "./support/bare-post-unit.ts";
import { endToEnd } from "./end-to-end.ts";
import { endToEndProvider } from "./end-to-end-provider.ts";
import { generationConcurrency } from "./generation-concurrency.ts";
import { httpThroughput } from "./http-throughput.ts";
import { idleCost } from "./idle-cost.ts";
import { pollScheduleCost } from "./poll-schedule-cost.ts";
import { retryBurst } from "./retry-burst.ts";
import { scheduledRetriesMemory } from "./scheduled-retries-memory.ts";

const quick = process.env.BENCH_QUICK === "1";
// BENCH_ONLY=http (comma-separated keys below) runs some figures only, e.g. before/after runs of one lever.
const only = (process.env.BENCH_ONLY ?? "").split(",").filter((key) => key !== "");
const log = (message: string) => process.stdout.write(`[${new Date().toISOString()}] ${message}\n`);

const loadBefore = os.loadavg();
// The unit of every CPU figure (figure.ts withUnits), measured in this run before and after the
// figures (the mean of both), as the machine's neighbours change its speed within a run.
const barePostBefore = await measureBarePostCpu();
const ctx = await createBenchContext(quick);
const figures: Figure[] = [];
try {
  for (const [key, name, run] of [
    ["http", "HTTP throughput", httpThroughput],
    ["idle", "idle processes", () => idleCost({ quick })],
    ["delivery", "webhook delivery", deliveryThroughput],
    ["e2e", "end to end", endToEnd],
    ["e2e-provider", "end to end through a provider simulator", endToEndProvider],
    ["poll", "worker CPU per 60-s generation", () => pollScheduleCost({ quick })],
    ["retry", "retry burst", retryBurst],
    ["memory", "scheduled retries memory", scheduledRetriesMemory],
    ["generations", "generation concurrency", () => generationConcurrency({ quick })],
  ] as const) {
    if (only.length > 0 && !only.includes(key)) continue;
    log(`${name}...`);
    const got = await run(ctx);
    for (const f of got) log(`  ${f.name}: ${f.value.toFixed(2)} ${f.unit}${f.ratio === undefined ? "" : ` (ratio ${f.ratio.toFixed(2)})`}`);
    figures.push(...got);
  }
} finally {
  await ctx.close();
}
const barePostAfter = await measureBarePostCpu();
const barePost = (barePostBefore + barePostAfter) / 2;
figures.unshift({
  name: "bare Express POST (the unit of CPU figures)",
  value: barePost,
  unit: "ms",
  cpu: cpuColumns({ bare: barePost }),
  note: `CPU of the bare Express process (bench/support/bare-server.ts) per JSON POST under autocannon, 32 keep-alive connections; the mean of ${barePostBefore.toFixed(3)} ms before the figures and ${barePostAfter.toFixed(3)} ms after; every figure's units column is its CPU per unit of work (subject processes, this run's PostgreSQL backends, Redis) divided by this`,
});
const withUnit = withUnits(figures, barePost);
const result = {
  date: new Date().toISOString(),
  quick,
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, loadavg_before: loadBefore, loadavg_after: os.loadavg() },
  figures: withUnit,
};
process.stdout.write(
  `\n${table(withUnit)}\n\nload average before ${loadBefore.map((l) => l.toFixed(2)).join(" ")}, after ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}; ${os.cpus().length} CPUs\n`,
);
for (const f of withUnit) if (f.note) process.stdout.write(`- ${f.name}: ${f.note}\n`);
const dir = path.join(REPO_ROOT, "bench/results");
mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, "latest.json"), `${JSON.stringify(result, null, 2)}\n`);
process.exit(0);
