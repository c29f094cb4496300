// Worker CPU per generation of a 60-s upstream job under each poll schedule, in the same run: the
// generic schedule (baseline) and the model's `expectedDurationMs` (docs/providers.md "Poll
// schedule"). N simulated `detect` tasks of 60 s (BENCH_QUICK: 100 tasks) run on ONE worker process
// (main.ts) per schedule, one schedule after the other, on a database and QUEUE_PREFIX of their
// own; CPU is the worker's utime + stime from /proc, from enqueue to the last completion. With
// callbacks (UPSTREAM_CALLBACK_URL set), N detect tasks of 60 s go through the gateway to the
// Replicate simulator, whose completed webhook wakes each task's job; there the completion lag
// after the provider finished is measured too. Alone (the bare-POST unit measured first):
// `pnpm exec tsx --conditions=@gen/source bench/poll-schedule-cost.ts`.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
import { closedPort } from "../packages/webhook-sender/test/helpers/receiver.ts";
import { startFaultStack, type FaultStack } from "../test/faults/support/fault-stack.ts";
import { startChild } from "./support/child.ts";
import { cpuColumns, type Figure } from "./support/figure.ts";
import { median, percentile } from "./support/load.ts";
import { countRows, findRows, insertRows, insertUser } from "../test/support/db-rows.ts";
import { profileWorkerIfAsked } from "./support/profiled-worker.ts";
import { runAlone } from "./support/run-alone.ts";
import { SHIPPED_TIMINGS } from "./support/shipped-timings.ts";

const UPSTREAM_MS = 60_000;
const TICKS_PER_SECOND = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/**
 * Before a figure is measured, its worker runs a batch of short generations: a worker's first
 * tasks compile their path (V8's optimizing compiler runs on the worker's own CPU) and open its
 * connections, a one-off cost that a worker running for days does not pay per task. Figures are
 * of the steady state.
 */
const WARM_UP_TASKS = 300;
const WARM_UP_UPSTREAM_MS = 1_000;

/** Resolves once `done()` reaches `count`; throws past `deadline` (epoch ms). */
async function allFinished(done: () => Promise<number>, count: number, deadline: number): Promise<void> {
  for (;;) {
    const finished = await done();
    if (finished === count) return;
    if (Date.now() > deadline) throw new Error(`only ${finished} of ${count} generations finished`);
    await sleep(500);
  }
}

interface Run {
  cpuPerGeneration: number;
  lags: number[];
  failed: number;
  wallS: number;
  /** First to last upstream finish (callbacks only). */
  upstreamSpreadS?: number;
  /** Where the worker's CPU went (callbacks only). */
  phases?: Phases;
}

/**
 * A callbacks run's worker CPU by phase: the submit steps (per generation), the minute the jobs
 * wait upstream (per second: what parked jobs, timers and periodic jobs cost), and the steps the
 * callbacks wake (per generation). The figure is their sum over the generations.
 */
interface Phases {
  submitMs: number;
  waitMsPerS: number;
  waitS: number;
  completeMs: number;
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
    await insertUser(db, userId, 1_000_000_000);
    /** `n` tasks of `upstreamMs` enqueued at once; resolves with their ids once all have finished. */
    const generate = async (n: number, upstreamMs: number): Promise<string[]> => {
      const ids = Array.from({ length: n }, () => newTaskId());
      await insertRows(
        db,
        "tasks",
        ids.map((id, i) => ({
          id,
          userId,
          endpoint: "detect",
          model,
          status: "queued",
          input: { text: `bench ${i} [[sim:delay_ms=${upstreamMs}]]` },
          requestId: "req_000000000000000000000000",
          billingMethod: "flat",
          reservedCredits: 1,
        })),
      );
      await queue.addBulk(ids.map((taskId) => ({ name: "generate", data: { taskId }, opts: { ...GENERATION_JOB_OPTIONS, jobId: generationJobId(taskId) } })));
      await allFinished(() => countRows(db, "tasks", { id: ids, status: ["completed", "failed"] }), n, Date.now() + upstreamMs * 3 + 60_000);
      return ids;
    };
    await generate(WARM_UP_TASKS, WARM_UP_UPSTREAM_MS);
    const pid = worker.child.pid!;
    const cpuBefore = cpuMs(pid);
    const enqueuedAt = Date.now();
    const ids = await generate(count, UPSTREAM_MS);
    const cpu = cpuMs(pid) - cpuBefore;
    const rows = await findRows(db, "tasks", { id: ids });
    return {
      cpuPerGeneration: cpu / count,
      lags: rows.map((r) => r.finishedAt!.getTime() - (r.startedAt!.getTime() + SIM_BASE_DELAY_MS + UPSTREAM_MS)),
      failed: rows.filter((r) => r.status !== "completed").length,
      wallS: (Date.now() - enqueuedAt) / 1000,
    };
  } finally {
    await worker.kill("SIGTERM");
    for (let cursor = "0"; ;) {
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

/**
 * The simulated detector of the polling runs, on a `replicate` route served by the Replicate
 * simulator; polled (no callbacks), it has `expectedDurationMs`, as the variant's name says.
 */
function replicateDetector(base: Record<string, unknown>, simPort: number, callbacks: boolean): Record<string, unknown> {
  return {
    ...base,
    ...(callbacks ? {} : { expectedDurationMs: UPSTREAM_MS }),
    id: "bench-replicate-detect",
    provider: "replicate",
    upstreamModel: "bench/ai-text-detector",
    upstreamUrl: `http://127.0.0.1:${simPort}/replicate/v1`,
  };
}

/** When the simulator finished the task's prediction (epoch ms): its `completed_at`, as Replicate reports it. */
async function providerFinishedAt(simBase: string, upstreamId: string): Promise<number> {
  // A data job's upstream id carries its endpoint after the prediction id (replicate-provider.ts).
  const predictionId = upstreamId.split(":")[0]!;
  const answer = await fetch(`${simBase}/predictions/${predictionId}`, { headers: { Authorization: "Bearer r8_bench" } });
  const prediction = (await answer.json()) as { completed_at: string | null };
  if (!prediction.completed_at) throw new Error(`prediction ${predictionId} has not finished`);
  return Date.parse(prediction.completed_at);
}

/**
 * `count` detect tasks of 60 s on the Replicate simulator, which POSTs its signed `completed`
 * webhook to the gateway's callback route when each job finishes: submitted through the gateway,
 * one worker process, UPSTREAM_CALLBACK_URL set. The worker's CPU per generation, and how long
 * after the job finished upstream the task was seen completed.
 */
async function runCallbackGenerations(count: number, callbacks = true): Promise<Run> {
  process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/gen";
  const database = await createScratchDatabase();
  const simPort = await closedPort();
  const sim = await startChild("apps/upstream-sim/src/main.ts", { UPSTREAM_SIM_PORT: String(simPort), LOG_LEVEL: "error" });
  await sim.message;
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-callback-catalog-"));
  const catalogPath = path.join(dir, "models.json");
  const catalog = JSON.parse(readFileSync(DEFAULT_CATALOG_PATH, "utf8")) as { models: Record<string, unknown>[] };
  catalog.models.push(
    replicateDetector(
      catalog.models.find((m) => m.id === "sim-detect-1")!,
      simPort,
      callbacks,
    ),
  );
  writeFileSync(catalogPath, JSON.stringify(catalog));
  const port = await closedPort();
  const base = `http://127.0.0.1:${port}`;
  let stack: FaultStack | undefined;
  let stopProfiled: (() => Promise<void>) | undefined;
  try {
    stack = await startFaultStack({
      databaseUrl: database.url,
      redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      env: {
        PORT: String(port),
        BASE_URL: base,
        MODEL_CATALOG: catalogPath,
        REPLICATE_API_TOKEN: "r8_bench",
        ...(callbacks ? { UPSTREAM_CALLBACK_URL: base, UPSTREAM_CALLBACK_SECRET: randomBytes(32).toString("hex") } : {}),
        UPSTREAM_ALLOWED_CIDRS: "127.0.0.1/32",
        LOG_LEVEL: "error",
        ...SHIPPED_TIMINGS,
      },
    });
    stopProfiled = await profileWorkerIfAsked(stack);
    const user = await stack.user(1_000_000_000);
    /** `n` detect tasks of `upstreamMs` submitted through the gateway, 50 at a time; resolves with their ids once answered. */
    const submit = async (n: number, upstreamMs: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < n; i += 50) {
        const answers = await Promise.all(
          Array.from({ length: Math.min(50, n - i) }, (_, j) =>
            stack!.call(user.auth, "POST", "/api/v1/detect", {
              model: "bench-replicate-detect",
              text: `bench ${i + j} [[up:delay_ms=${upstreamMs}]]`,
            }),
          ),
        );
        for (const answer of answers) {
          if (answer.status !== 202) throw new Error(`submission answered ${answer.status} ${JSON.stringify(answer.body)}`);
          ids.push(answer.body.id as string);
        }
      }
      return ids;
    };
    const finished = (ids: string[], upstreamMs: number) =>
      allFinished(() => countRows(stack!.db, "tasks", { id: ids, status: ["completed", "failed"] }), ids.length, Date.now() + upstreamMs * 3 + 60_000);
    await finished(await submit(WARM_UP_TASKS, WARM_UP_UPSTREAM_MS), WARM_UP_UPSTREAM_MS);
    const pid = stack.workers.at(-1)!.child.pid!;
    const cpuBefore = cpuMs(pid);
    const startedAt = Date.now();
    const ids = await submit(count, UPSTREAM_MS);
    // Every submit step has run once each task's upstream job is recorded.
    const recorded = async () => (await findRows(stack!.db, "tasks", { id: ids })).filter((row) => row.upstreamId !== null).length;
    await allFinished(recorded, count, Date.now() + 60_000);
    const cpuSubmitted = cpuMs(pid);
    const submittedAt = Date.now();
    // No upstream job ends before a minute after the first submission: until just before then, the worker only waits.
    await sleep(startedAt + UPSTREAM_MS - 500 - Date.now());
    const cpuWaited = cpuMs(pid);
    const waitS = (Date.now() - submittedAt) / 1000;
    await finished(ids, UPSTREAM_MS);
    const cpuEnd = cpuMs(pid);
    const cpu = cpuEnd - cpuBefore;
    const phases: Phases = {
      submitMs: (cpuSubmitted - cpuBefore) / count,
      waitMsPerS: (cpuWaited - cpuSubmitted) / waitS,
      waitS,
      completeMs: (cpuEnd - cpuWaited) / count,
    };
    const rows = await findRows(stack.db, "tasks", { id: ids });
    const simBase = `http://127.0.0.1:${simPort}/replicate/v1`;
    const lags: number[] = [];
    const finishedUpstream: number[] = [];
    for (const row of rows) {
      finishedUpstream.push(await providerFinishedAt(simBase, row.upstreamId!));
      lags.push(row.finishedAt!.getTime() - finishedUpstream.at(-1)!);
    }
    return {
      cpuPerGeneration: cpu / count,
      lags,
      upstreamSpreadS: (Math.max(...finishedUpstream) - Math.min(...finishedUpstream)) / 1000,
      phases,
      failed: rows.filter((r) => r.status !== "completed").length,
      wallS: (Date.now() - startedAt) / 1000,
    };
  } finally {
    await stopProfiled?.();
    await stack?.close();
    await sim.stop();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The callbacks figure taken apart: each generation's two steps and its share of the minute's waiting. */
function phaseText(phases: Phases, count: number): string {
  const waitShare = (phases.waitMsPerS * phases.waitS) / count;
  return `by phase: the submit step ${phases.submitMs.toFixed(2)} ms, waiting ${phases.waitMsPerS.toFixed(1)} ms/s over ${phases.waitS.toFixed(0)} s (${waitShare.toFixed(2)} ms per generation with ${count} in flight), the step the callback wakes ${phases.completeMs.toFixed(2)} ms`;
}

/**
 * BENCH_POLL_VARIANTS=callbacks (comma-separated: generic, expected, replicate-expected, callbacks) runs some variants
 * only; BENCH_POLL_TASKS=N sets the tasks per variant.
 */
export async function pollScheduleCost(options: { quick: boolean }): Promise<Figure[]> {
  const count = Number(process.env.BENCH_POLL_TASKS ?? (options.quick ? 100 : 500));
  const variants = (process.env.BENCH_POLL_VARIANTS ?? "generic,expected,replicate-expected,callbacks").split(",");
  // The shipped catalog plus the same simulated detector with expectedDurationMs: the only difference between the two polling runs.
  const catalog = JSON.parse(readFileSync(DEFAULT_CATALOG_PATH, "utf8")) as { models: Record<string, unknown>[] };
  const base = catalog.models.find((m) => m.id === "sim-detect-1")!;
  catalog.models.push({ ...base, id: "sim-detect-expected", expectedDurationMs: UPSTREAM_MS + SIM_BASE_DELAY_MS });
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-poll-catalog-"));
  const catalogPath = path.join(dir, "models.json");
  writeFileSync(catalogPath, JSON.stringify(catalog));
  const describe = (run: Run, what: string) =>
    `${count} ${what} of 60 s on one worker process over ${run.wallS.toFixed(0)} s, ${run.failed} not completed; seen done a median ${median(run.lags).toFixed(0)} ms (p99 ${percentile(run.lags, 99).toFixed(0)} ms) after the upstream finished`;
  const figures: Figure[] = [];
  try {
    const generic = variants.includes("generic") ? await runGenerations("sim-detect-1", count, catalogPath) : undefined;
    if (generic) {
      figures.push({
        name: "worker CPU per 60-s generation, generic schedule",
        value: generic.cpuPerGeneration,
        unit: "ms",
        cpu: cpuColumns({ worker: generic.cpuPerGeneration }),
        note: describe(generic, "simulated detect tasks"),
      });
    }
    if (variants.includes("expected")) {
      const expected = await runGenerations("sim-detect-expected", count, catalogPath);
      figures.push({
        name: "worker CPU per 60-s generation, polls by expectedDurationMs",
        value: expected.cpuPerGeneration,
        unit: "ms",
        ...(generic ? { baseline: generic.cpuPerGeneration, ratio: expected.cpuPerGeneration / generic.cpuPerGeneration } : {}),
        target: "<= 5 ms",
        pass: expected.cpuPerGeneration <= 5 && expected.failed === 0,
        cpu: cpuColumns({ worker: expected.cpuPerGeneration }),
        note: `${describe(expected, "simulated detect tasks")}; baseline: the generic schedule`,
      });
    }
    const replicatePolled = variants.includes("replicate-expected") ? await runCallbackGenerations(count, false) : undefined;
    if (replicatePolled) {
      figures.push({
        name: "worker CPU per 60-s generation, Replicate route polled by expectedDurationMs",
        value: replicatePolled.cpuPerGeneration,
        unit: "ms",
        cpu: cpuColumns({ worker: replicatePolled.cpuPerGeneration }),
        note: `${describe(replicatePolled, "detect tasks on the Replicate simulator")}; no UPSTREAM_CALLBACK_URL: the callbacks figure's same-provider baseline`,
      });
    }
    if (variants.includes("callbacks")) {
      const callbacks = await runCallbackGenerations(count);
      const p99 = percentile(callbacks.lags, 99);
      figures.push(
        {
          name: "worker CPU per 60-s generation, callbacks",
          value: callbacks.cpuPerGeneration,
          unit: "ms",
          ...(generic ? { baseline: generic.cpuPerGeneration, ratio: callbacks.cpuPerGeneration / generic.cpuPerGeneration } : {}),
          target: "<= 2 ms",
          pass: callbacks.cpuPerGeneration <= 2 && callbacks.failed === 0,
          cpu: cpuColumns({ worker: callbacks.cpuPerGeneration }),
          note: `${describe(callbacks, "detect tasks on the Replicate simulator")}; UPSTREAM_CALLBACK_URL set, the Replicate simulator's completed webhook reaches the gateway's callback route; ${phaseText(callbacks.phases!, count)}`,
        },
        {
          name: "completion after the provider finished, callbacks, p99",
          value: p99,
          unit: "ms",
          target: "<= 1000 ms",
          pass: p99 <= 1000 && callbacks.lags.length === count,
          note: `task finished_at minus the prediction's completed_at as the Replicate simulator reports it (the predictions finished within ${callbacks.upstreamSpreadS!.toFixed(1)} s of each other); median ${median(callbacks.lags).toFixed(0)} ms, max ${Math.max(...callbacks.lags)} ms`,
        },
      );
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runAlone(pollScheduleCost);
