// Worker CPU per generation of a 60-s upstream job under each poll schedule, in the same run: the
// generic schedule (baseline) and the model's `expectedDurationMs` (docs/providers.md "Poll
// schedule"). N simulated `detect` tasks of 60 s (BENCH_QUICK: 100 tasks) run on ONE worker process
// (main.ts) per schedule, one schedule after the other, on a database and QUEUE_PREFIX of their
// own; CPU is the worker's utime + stime from /proc, from enqueue to the last completion. The same
// run measures a bare Express POST (bench/support/bare-server.ts, sequential keep-alive POSTs, its
// process's CPU) so each figure is also given in bare-POST units. Alone:
// `pnpm exec tsx --conditions=@gen/source bench/poll-schedule-cost.ts`.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_CATALOG_PATH } from "@gen/catalog";
import { createDatabase } from "@gen/db";
import { newTaskId, newUserId } from "@gen/ids";
import { GENERATION_JOB_OPTIONS, QUEUE_NAMES, createQueue, createRedis, generationJobId, type GenerationJobData } from "@gen/queues";
import { SIM_BASE_DELAY_MS } from "@gen/simulator";
import { startApp } from "../test/faults/support/app-process.ts";
import { createScratchDatabase } from "../test/support/scratch-database.ts";
import { startChild } from "./support/child.ts";
import { table, type Figure } from "./support/figure.ts";
import { median, percentile } from "./support/load.ts";

const UPSTREAM_MS = 60_000;
const TICKS_PER_SECOND = 100;
const BARE_POSTS = 3000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** CPU ms of the bare Express process per JSON POST, sequential on one keep-alive connection. */
async function bareExpressPostCpu(): Promise<number> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const bare = await startChild("bench/support/bare-server.ts", { PORT: String(port) });
  await bare.message;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const body = JSON.stringify({ model: "sim-image-1", prompt: "a lighthouse at dusk", size: "1024x1024" });
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port, path: "/api/v1/images/generations", method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
        (res) => res.resume().on("end", resolve),
      );
      req.on("error", reject);
      req.end(body);
    });
  try {
    for (let i = 0; i < 200; i++) await post();
    const before = cpuMs(bare.child.pid!);
    for (let i = 0; i < BARE_POSTS; i++) await post();
    return (cpuMs(bare.child.pid!) - before) / BARE_POSTS;
  } finally {
    agent.destroy();
    await bare.stop();
  }
}

interface Run {
  cpuPerGeneration: number;
  lags: number[];
  failed: number;
  wallS: number;
}

/** `count` tasks of `model` on one fresh worker process; the worker's CPU per generation. */
async function runGenerations(model: string, count: number, catalogPath: string): Promise<Run> {
  process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/gen";
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const database = await createScratchDatabase();
  const db = createDatabase(database.url, { max: 4 });
  const prefix = `bench_poll_${randomBytes(4).toString("hex")}`;
  const storageDir = mkdtempSync(path.join(os.tmpdir(), "bench-poll-storage-"));
  const redis = createRedis(redisUrl, "request");
  const queue = createQueue<GenerationJobData>(QUEUE_NAMES.generation, redis, prefix);
  const inherited = { ...process.env };
  delete inherited.WORKER_CONCURRENCY;
  delete inherited.GENERATION_TIMEOUT_MS;
  delete inherited.UPSTREAM_CALLBACK_URL;
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: prefix,
    STORAGE_DIR: storageDir,
    MODEL_CATALOG: catalogPath,
    WORKER_METRICS_PORT: "0",
    LOG_LEVEL: "error",
  };
  const worker = await startApp("worker", { ...inherited, ...env } as Record<string, string>, "bench-worker");
  try {
    const userId = newUserId();
    await db.user.create({ data: { id: userId, credits: 1_000_000_000 } });
    const ids = Array.from({ length: count }, () => newTaskId());
    await db.task.createMany({
      data: ids.map((id, i) => ({
        id,
        userId,
        endpoint: "detect",
        model,
        status: "queued",
        input: { text: `bench ${i} [[sim:delay_ms=${UPSTREAM_MS}]]` },
        requestId: "req_000000000000000000000000",
        billingMethod: "flat",
        reservedCredits: 1,
      })),
    });
    const pid = worker.child.pid!;
    const cpuBefore = cpuMs(pid);
    const enqueuedAt = Date.now();
    await queue.addBulk(ids.map((taskId) => ({ name: "generate", data: { taskId }, opts: { ...GENERATION_JOB_OPTIONS, jobId: generationJobId(taskId) } })));
    const deadline = enqueuedAt + UPSTREAM_MS * 3 + 60_000;
    for (;;) {
      const [row] = await db.$sql.rows<{ done: number }>`SELECT count(*) FILTER (WHERE status IN ('completed', 'failed'))::int AS done FROM tasks`;
      if (row!.done === count) break;
      if (Date.now() > deadline) throw new Error(`only ${row!.done} of ${count} generations finished`);
      await sleep(500);
    }
    const cpu = cpuMs(pid) - cpuBefore;
    const rows = await db.task.findMany({ where: { id: { in: ids } }, select: { status: true, startedAt: true, finishedAt: true } });
    return {
      cpuPerGeneration: cpu / count,
      lags: rows.map((r) => r.finishedAt!.getTime() - (r.startedAt!.getTime() + SIM_BASE_DELAY_MS + UPSTREAM_MS)),
      failed: rows.filter((r) => r.status !== "completed").length,
      wallS: (Date.now() - enqueuedAt) / 1000,
    };
  } finally {
    await worker.kill("SIGTERM");
    for (let cursor = "0"; ; ) {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      if (keys.length > 0) await redis.del(...keys);
      if ((cursor = next) === "0") break;
    }
    await queue.close();
    redis.disconnect();
    await db.$disconnect();
    await database.drop();
    rmSync(storageDir, { recursive: true, force: true });
  }
}

export async function pollScheduleCost(options: { quick: boolean }): Promise<Figure[]> {
  const count = options.quick ? 100 : 500;
  // The shipped catalog plus the same simulated detector with expectedDurationMs: the only difference between the two runs.
  const catalog = JSON.parse(readFileSync(DEFAULT_CATALOG_PATH, "utf8")) as { models: Record<string, unknown>[] };
  const base = catalog.models.find((m) => m.id === "sim-detect-1")!;
  catalog.models.push({ ...base, id: "sim-detect-expected", expectedDurationMs: UPSTREAM_MS + SIM_BASE_DELAY_MS });
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-poll-catalog-"));
  const catalogPath = path.join(dir, "models.json");
  writeFileSync(catalogPath, JSON.stringify(catalog));
  try {
    const bare = await bareExpressPostCpu();
    const generic = await runGenerations("sim-detect-1", count, catalogPath);
    const expected = await runGenerations("sim-detect-expected", count, catalogPath);
    const describe = (run: Run) =>
      `${count} tasks of 60 s on one worker process over ${run.wallS.toFixed(0)} s, ${run.failed} not completed; seen done a median ${median(run.lags).toFixed(0)} ms (p99 ${percentile(run.lags, 99).toFixed(0)} ms) after the upstream finished; ${(run.cpuPerGeneration / bare).toFixed(1)} bare-POST units (bare Express POST ${bare.toFixed(3)} ms of its process's CPU)`;
    return [
      { name: "worker CPU per 60-s generation, generic schedule", value: generic.cpuPerGeneration, unit: "ms", note: describe(generic) },
      {
        name: "worker CPU per 60-s generation, expectedDurationMs",
        value: expected.cpuPerGeneration,
        unit: "ms",
        baseline: generic.cpuPerGeneration,
        ratio: expected.cpuPerGeneration / generic.cpuPerGeneration,
        target: "<= 5 ms",
        pass: expected.cpuPerGeneration <= 5 && expected.failed === 0,
        note: describe(expected),
      },
      { name: "bare Express POST (same run)", value: bare, unit: "ms", note: `${BARE_POSTS} sequential keep-alive POSTs; CPU of the bare-server process per POST` },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const figures = await pollScheduleCost({ quick: process.env.BENCH_QUICK === "1" });
  process.stdout.write(`${table(figures)}\n`);
  for (const f of figures) if (f.note) process.stdout.write(`- ${f.name}: ${f.note}\n`);
  process.exit(0);
}
