// Running generations one worker process tracks at once: 2,000 simulated generations
// of 60 s each (BENCH_QUICK: 300 of 10 s) enqueued together on ONE worker process (main.ts) with the
// default WORKER_CONCURRENCY, on a database and QUEUE_PREFIX of their own. Figures: how many were
// running upstream at once, how late after its upstream finished each task completed, and the
// worker's CPU per generation from /proc/<pid>/stat (utime + stime). Runs on its own too:
// `pnpm exec tsx bench/generation-concurrency.ts`.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createDatabase } from "@gen/db";
import { newTaskId, newUserId } from "@gen/ids";
import { GENERATION_JOB_OPTIONS, QUEUE_NAMES, createQueue, createRedis, generationJobId, type GenerationJobData } from "@gen/queues";
import { SIM_BASE_DELAY_MS } from "@gen/simulator";
import { startApp } from "../test/faults/support/app-process.ts";
import { createScratchDatabase } from "../test/support/scratch-database.ts";
import { rssBytes } from "./support/child.ts";
import { table, type Figure } from "./support/figure.ts";
import { median, percentile } from "./support/load.ts";
import { findRows, insertRows, insertUser } from "../test/support/db-rows.ts";

const DEFAULT_WORKER_CONCURRENCY = 16;
// Linux's USER_HZ: /proc/<pid>/stat counts CPU time in ticks of 1/100 s.
const TICKS_PER_SECOND = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** utime + stime of a process in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

export async function generationConcurrency(options: { quick: boolean }): Promise<Figure[]> {
  const count = options.quick ? 300 : 2000;
  const upstreamMs = options.quick ? 10_000 : 60_000;
  process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/gen";
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const database = await createScratchDatabase();
  const db = createDatabase(database.url, { max: 4 });
  const prefix = `bench_gen_${randomBytes(4).toString("hex")}`;
  const storageDir = mkdtempSync(path.join(os.tmpdir(), "bench-gen-storage-"));
  const redis = createRedis(redisUrl, "request");
  const queue = createQueue<GenerationJobData>(QUEUE_NAMES.generation, redis, prefix);
  // Default WORKER_CONCURRENCY and GENERATION_TIMEOUT_MS: nothing here sets them.
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: prefix,
    STORAGE_DIR: storageDir,
    WORKER_METRICS_PORT: "0",
    LOG_LEVEL: "error",
  };
  const inherited = { ...process.env };
  delete inherited.WORKER_CONCURRENCY;
  delete inherited.GENERATION_TIMEOUT_MS;
  const worker = await startApp("worker", { ...inherited, ...env } as Record<string, string>, "bench-worker");
  try {
    const userId = newUserId();
    await insertUser(db, userId, 1_000_000_000);
    const ids = Array.from({ length: count }, () => newTaskId());
    for (let i = 0; i < ids.length; i += 1000) {
      await insertRows(
        db,
        "tasks",
        ids.slice(i, i + 1000).map((id, j) => ({
          id,
          userId,
          endpoint: "detect",
          model: "sim-detect-1",
          status: "queued",
          input: { text: `bench ${i + j} [[sim:delay_ms=${upstreamMs}]]` },
          requestId: "req_000000000000000000000000",
          billingMethod: "flat",
          reservedCredits: 1,
        })),
      );
    }

    const pid = worker.child.pid!;
    const cpuBefore = cpuMs(pid);
    const enqueuedAt = Date.now();
    for (let i = 0; i < ids.length; i += 500) {
      await queue.addBulk(
        ids.slice(i, i + 500).map((taskId) => ({ name: "generate", data: { taskId }, opts: { ...GENERATION_JOB_OPTIONS, jobId: generationJobId(taskId) } })),
      );
    }
    // Sampled twice a second: tasks submitted upstream and not finished.
    let tracked = 0;
    let allRunningAt: number | undefined;
    let rss = 0;
    const deadline = enqueuedAt + upstreamMs * 3 + 60_000;
    for (;;) {
      const [row] = await db.$sql.rows<{ running: number; done: number }>`
        SELECT count(*) FILTER (WHERE status = 'in_progress' AND upstream_id IS NOT NULL)::int AS running,
               count(*) FILTER (WHERE status IN ('completed', 'failed'))::int AS done
        FROM tasks`;
      tracked = Math.max(tracked, row!.running);
      if (row!.running + row!.done === count && allRunningAt === undefined) allRunningAt = Date.now();
      if (row!.running === count) rss = await rssBytes(pid);
      if (row!.done === count) break;
      if (Date.now() > deadline) throw new Error(`only ${row!.done} of ${count} generations finished`);
      await sleep(500);
    }
    const cpu = cpuMs(pid) - cpuBefore;

    const rows = await findRows(db, "tasks", { id: ids });
    const failed = rows.filter((r) => r.status !== "completed").length;
    // How long after its upstream job finished (submit + SIM_BASE_DELAY_MS + delay) each task completed.
    const lags = rows.map((r) => r.finishedAt!.getTime() - (r.startedAt!.getTime() + SIM_BASE_DELAY_MS + upstreamMs));
    const finishes = rows.map((r) => r.finishedAt!.getTime());
    const spreadS = (Math.max(...finishes) - Math.min(...finishes)) / 1000;
    const startSpreadS = (Math.max(...rows.map((r) => r.startedAt!.getTime())) - enqueuedAt) / 1000;
    const note = `${count} tasks of ${upstreamMs / 1000} s upstream time on one worker process, WORKER_CONCURRENCY ${DEFAULT_WORKER_CONCURRENCY} (default); all submitted within ${startSpreadS.toFixed(1)} s of the enqueue; ${failed} not completed`;
    return [
      {
        name: "generations running at once (one worker)",
        value: tracked,
        unit: "tasks",
        baseline: DEFAULT_WORKER_CONCURRENCY,
        ratio: tracked / DEFAULT_WORKER_CONCURRENCY,
        target: `= ${count}`,
        pass: tracked === count && failed === 0,
        note: `${note}; baseline: the slots a sleeping poll loop held`,
      },
      {
        name: "completion after upstream done, median",
        value: median(lags),
        unit: "ms",
        note: `p99 ${percentile(lags, 99).toFixed(0)} ms, max ${Math.max(...lags)} ms; finish times spread over ${spreadS.toFixed(1)} s`,
      },
      {
        name: "worker CPU per generation",
        value: cpu / count,
        unit: "ms",
        note: `${(cpu / 1000).toFixed(1)} s utime+stime of the worker process from enqueue to the last completion (${((Date.now() - enqueuedAt) / 1000).toFixed(0)} s)`,
      },
      { name: `worker RSS with ${count} generations running`, value: rss / 1024 / 1024, unit: "MB" },
    ];
  } finally {
    await worker.kill("SIGTERM");
    // Every key of the run's prefix: the generation queue and the worker's maintenance queue.
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

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const figures = await generationConcurrency({ quick: process.env.BENCH_QUICK === "1" });
  process.stdout.write(`${table(figures)}\n`);
  for (const f of figures) if (f.note) process.stdout.write(`- ${f.name}: ${f.note}\n`);
  process.exit(0);
}
