// A completed image task end to end through a provider's wire protocol: submission to the gateway,
// generation by the OpenAI adapter against the upstream simulator's OpenAI Images API (synchronous,
// base64 answer), the image stored, credits settled, the webhook delivered to the bench receiver.
// CPU per task of every process serving it (gateway, worker, this run's PostgreSQL backends, Redis)
// at 20 and 200 tasks/s, on a stack, database and QUEUE_PREFIX of its own. The simulator stands
// for the provider: its CPU is not counted.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_CATALOG_PATH } from "@gen/catalog";
import { closedPort } from "../packages/webhook-sender/test/helpers/receiver.ts";
import { OPENAI_SIM_API_KEY } from "../apps/upstream-sim/src/index.ts";
import { startFaultStack, type FaultStack } from "../test/faults/support/fault-stack.ts";
import { createScratchDatabase } from "../test/support/scratch-database.ts";
import type { BenchContext } from "./support/bench-context.ts";
import { startChild } from "./support/child.ts";
import { cpuColumns, type Figure } from "./support/figure.ts";
import { median, percentile } from "./support/load.ts";
import { profileWorkerIfAsked } from "./support/profiled-worker.ts";
import { CpuTally, postgresBackendsOf, sampleCpu } from "./support/proc-cpu.ts";
import { countRows } from "../test/support/db-rows.ts";
import { SHIPPED_TIMINGS } from "./support/shipped-timings.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const MODEL = "bench-openai-image";

function openaiImageModel(simPort: number): Record<string, unknown> {
  return {
    id: MODEL,
    endpoint: "images",
    provider: "openai",
    upstreamModel: "gpt-image-1",
    upstreamUrl: `http://127.0.0.1:${simPort}/openai/v1`,
    description: "OpenAI Images behind the upstream simulator.",
    contentFilter: false,
    maxPromptLength: 2000,
    sizes: ["256x256"],
    defaultSize: "256x256",
    parameters: { type: "object", properties: {} },
    pricing: { method: "flat", credits: 2, units: [] },
    moderationRefund: { output: 1 },
  };
}

export async function endToEndProvider(ctx: BenchContext): Promise<Figure[]> {
  const simPort = await closedPort();
  const sim = await startChild("apps/upstream-sim/src/main.ts", { UPSTREAM_SIM_PORT: String(simPort), LOG_LEVEL: "error" });
  await sim.message;
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-e2e-provider-"));
  const catalogPath = path.join(dir, "models.json");
  const catalog = JSON.parse(readFileSync(DEFAULT_CATALOG_PATH, "utf8")) as { models: Record<string, unknown>[] };
  catalog.models.push(openaiImageModel(simPort));
  writeFileSync(catalogPath, JSON.stringify(catalog));
  const database = await createScratchDatabase();
  let stack: FaultStack | undefined;
  let stopProfiled: (() => Promise<void>) | undefined;
  try {
    stack = await startFaultStack({
      databaseUrl: database.url,
      redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      env: {
        ...ctx.receiver.childEnv,
        MODEL_CATALOG: catalogPath,
        OPENAI_API_KEY: OPENAI_SIM_API_KEY,
        GATEWAY_PROCESSES: "1",
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "error",
        ...SHIPPED_TIMINGS,
      },
    });
    const app = stack;
    stopProfiled = await profileWorkerIfAsked(app);
    const databaseName = new URL(database.url).pathname.slice(1);
    const groups = {
      gateway: () => [app.gateway.child.pid!],
      worker: () => app.workers.map((w) => w.child.pid!),
      ...ctx.sharedGroups,
      postgres: () => postgresBackendsOf(databaseName),
    };
    const user = await app.user(1_000_000_000);
    const at = async (rate: number, count: number, target?: number): Promise<Figure[]> => {
      const sent = new Map<string, number>();
      const cpu = new CpuTally();
      const stop = sampleCpu(groups);
      const begin = Date.now();
      await Promise.all(
        Array.from({ length: count }, async (_, i) => {
          await sleep(begin + (i * 1000) / rate - Date.now());
          const t = Date.now();
          const res = await app.call(user.auth, "POST", "/api/v1/images/generations", { model: MODEL, prompt: `bench ${i}`, webhook_url: ctx.receiver.url });
          if (res.status !== 202) throw new Error(`submission answered ${res.status} ${JSON.stringify(res.body)}`);
          sent.set(res.body.id as string, t);
        }),
      );
      const deadline = Date.now() + 120_000;
      while ([...sent.keys()].some((id) => !ctx.receiver.posts.has(id))) {
        if (Date.now() > deadline) throw new Error(`end to end through OpenAI Images at ${rate}/s: webhooks missing after 120 s`);
        await sleep(10);
      }
      const wallS = (Date.now() - begin) / 1000;
      cpu.add(stop(), count);
      const completed = await countRows(app.db, "tasks", { id: [...sent.keys()], status: "completed" });
      const lags = [...sent].map(([id, t]) => ctx.receiver.posts.get(id)![0]!.at - t);
      const perTask = cpuColumns(cpu.perUnit());
      return [
        {
          name: `image task end to end, OpenAI Images, ${rate}/s: submission to webhook, median`,
          value: median(lags),
          unit: "ms",
          cpu: perTask,
          ...(target === undefined ? {} : { target: `<= ${target} bare-POST units`, unitsTarget: target, pass: completed === count }),
          note: `${count} gpt-image-1 tasks (256x256 base64 PNG stored) at ${rate}/s over ${wallS.toFixed(1)} s, ${completed} completed; p99 ${percentile(lags, 99)} ms; CPU per task of the gateway, the worker, this run's PostgreSQL backends and Redis (submission, generation, storage, settlement, delivery); the upstream simulator stands for the provider and is not counted`,
        },
      ];
    };
    // A fresh stack's first tasks compile the path and open connections (a one-off cost that a
    // service running for days does not pay per task): a warm-up batch first, not counted.
    await at(100, ctx.quick ? 100 : 300);
    return [...(await at(20, ctx.quick ? 60 : 300)), ...(await at(200, ctx.quick ? 400 : 2000, 20))];
  } finally {
    await stopProfiled?.();
    await stack?.close();
    await sim.stop();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
