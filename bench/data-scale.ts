// `pnpm bench:data`: the database at 10 million tasks against an empty one. For each,
// a scratch database built from the migrations and loaded in SQL (bench/support/data-load.ts),
// then: poll p50/p99 through a real gateway process (the two databases polled in alternating
// rounds, so that other load on the machine hits both alike), the time of every reconciler's run and of
// each statement it sends (captured from @gen/db and replayed under EXPLAIN ANALYZE), the plans,
// and bytes per task in each table. Fails if a plan reads a big table sequentially or filters away
// most of what it reads. Then task retention on the loaded database: the tasks older than
// PURGE_DAYS (default 15 of the 30 days loaded: half of them) removed by the maintenance step while
// polls and submissions run through the gateway: rows removed per second, poll p99 during the
// purge against before it, table sizes before, after and after a plain VACUUM. DATA_TASKS=n to
// choose the size; BENCH_QUICK=1 for 100,000.
import { once } from "node:events";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes, randomInt } from "node:crypto";
import pg from "pg";
import { loadConfig } from "@gen/config";
import { createDatabase, listTasks, purgeExpiredIdempotencyKeys, readDelivery, type Database } from "@gen/db";
import { createLocalStorage } from "@gen/storage";
import { createLogger } from "@gen/logger";
import { QUEUE_NAMES, createQueue, createRedis, type GenerationJobData, type WebhookJobData } from "@gen/queues";
// The gateway's own poll statements, run in-process to capture them: nothing here is shared code.
// eslint-disable-next-line no-restricted-imports
import { createUser } from "../apps/gateway/test/support/test-gateway.ts";
// eslint-disable-next-line no-restricted-imports
import { authenticateKey } from "../apps/gateway/src/services/authenticate-key.ts";
// eslint-disable-next-line no-restricted-imports
import { readTask } from "../apps/gateway/src/services/read-task.ts";
import { reconcileDeliveries } from "../apps/worker/src/delivery/index.ts";
import { reconcileTasks } from "../apps/worker/src/reconcile-tasks.ts";
import { purgeFinishedTasks, type PurgeBatch } from "../apps/worker/src/maintenance/purge-finished-tasks.ts";
import { removeExpiredMedia } from "../apps/worker/src/maintenance/remove-expired-media.ts";
import { closedPort } from "../packages/webhook-sender/test/helpers/receiver.ts";
import { startApp } from "../test/faults/support/app-process.ts";
import { createScratchDatabase } from "../test/support/scratch-database.ts";
import { REPO_ROOT } from "./support/child.ts";
import { DATA_MIX, LOADED_TABLES, loadData, taskIdOf, type LoadStep } from "./support/data-load.ts";
import { percentile } from "./support/load.ts";
import { cpuPerUnit, pidsNamed, sampleCpu, type CpuSample } from "./support/proc-cpu.ts";

const quick = process.env.BENCH_QUICK === "1";
const TASKS = Number(process.env.DATA_TASKS ?? (quick ? 100_000 : 10_000_000));
const EMPTY_TASKS = 1_000;
const POLLS = quick ? 1_000 : 4_000;
const POLL_LANES = 4;
const POLL_ROUNDS = 4;
const RUNS = 5;
// A plan may filter this many rows on the way to its answer before it counts as a scan in disguise.
const MAX_ROWS_REMOVED = 50_000;
// Retention for the purge figure: of the 30 days loaded, the older half goes.
const PURGE_DAYS = Number(process.env.PURGE_DAYS ?? 15);
const PURGE_BASELINE_MS = quick ? 10_000 : 30_000;
// PURGE_UNTIL (an ISO time): the purge stops there after the batch in hand, and the figures are of
// what it removed by then (a run that must end by a given time).
const PURGE_UNTIL = process.env.PURGE_UNTIL ? Date.parse(process.env.PURGE_UNTIL) : undefined;
if (PURGE_UNTIL !== undefined && Number.isNaN(PURGE_UNTIL)) throw new Error(`PURGE_UNTIL is not a time: ${process.env.PURGE_UNTIL}`);
const log = (message: string) => process.stdout.write(`[${new Date().toISOString()}] ${message}\n`);

interface Statement {
  caller: string;
  sql: string;
  values: unknown[];
}

interface TableSize {
  table: string;
  rows: number;
  totalBytes: number;
  heapBytes: number;
  indexBytes: number;
  bytesPerTask: number;
}

interface Measured {
  label: string;
  tasks: number;
  loadSeconds: number;
  steps: LoadStep[];
  sizes: TableSize[];
  poll: { p50: number; p99: number; count: number; cpu: string };
  /** Median wall time of each caller's whole run, ms. */
  callers: Record<string, number>;
  statements: Array<{ caller: string; sql: string; ms: number; plan: string; problems: string[] }>;
}

interface PurgeMeasured {
  retentionDays: number;
  seconds: number;
  batches: number;
  tasks: number;
  /** Tasks, ledger rows, deliveries, attempts and keys removed, minus the carry-forward rows written: the net rows gone. */
  rows: number;
  carried: number;
  /** The slowest batch (find + remove), ms. */
  slowestBatchMs: number;
  /** The most tasks one batch removed (the batches grow within a time target). */
  largestBatch: number;
  /** Stopped at PURGE_UNTIL with expired tasks left. */
  stopped: boolean;
  baseline: { p50: number; p99: number; count: number; submitted: number };
  during: { p50: number; p99: number; count: number; submitted: number };
  before: TableSize[];
  after: TableSize[];
  vacuumed: TableSize[];
  vacuumSeconds: number;
}

interface Prepared {
  label: string;
  tasks: number;
  loadSeconds: number;
  steps: LoadStep[];
  sizes: TableSize[];
  poller: Poller;
  /** Runs the poll statements, the reconcilers and the purge as the code does, then EXPLAINs what they sent. */
  statements(): Promise<Pick<Measured, "callers" | "statements">>;
  /** Task retention at PURGE_DAYS under poll and submission load (bench/README.md "Task retention at scale"). */
  purge(): Promise<PurgeMeasured>;
  close(): Promise<void>;
}

// What a run has to remove (scratch databases, gateway processes, Redis keys, storage directories):
// each prepared database's close, run by the normal end, by a failure, and by SIGINT or SIGTERM.
const closers = new Set<() => Promise<void>>();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    log(`${signal}: removing the scratch databases, the gateway processes and the Redis keys`);
    void Promise.allSettled([...closers].map((close) => close())).then(() => process.exit(130));
  });
}

/** A scratch database loaded with `tasks` tasks, a gateway process polling it, and the statement runner. */
async function prepare(label: string, tasks: number): Promise<Prepared> {
  log(`${label}: scratch database with ${tasks.toLocaleString("en-US")} tasks`);
  const database = await createScratchDatabase();
  const captured: Statement[] = [];
  let caller = "";
  const db: Database = createDatabase(database.url, { max: 4, onQuery: (sql, values) => caller && captured.push({ caller, sql, values }) });
  const prefix = `bench_data_${randomBytes(4).toString("hex")}`;
  const redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", "request");
  const storageDir = mkdtempSync(path.join(os.tmpdir(), "bench-data-"));
  const client = new pg.Client({ connectionString: database.url });
  const storage = createLocalStorage({ dir: storageDir, cdnUrl: "http://127.0.0.1/cdn" });
  let poller: Poller | undefined;
  let closing: Promise<void> | undefined;
  // Once, whoever asks first (the run's end, or a signal during it): a second call waits for the first.
  const close = () =>
    (closing ??= (async () => {
      await poller?.stop().catch(() => undefined);
      await client.end().catch(() => undefined);
      await db.$disconnect().catch(() => undefined);
      await deleteKeys(redis, prefix).catch(() => undefined);
      redis.disconnect();
      rmSync(storageDir, { recursive: true, force: true });
      await database.drop();
    })());
  closers.add(close);
  try {
    if (redis.status !== "ready") await once(redis, "ready");
    const user = await createUser(db, 1_000_000_000);
    await client.connect();
    const loadStarted = performance.now();
    const steps = await loadData(client, tasks, user.userId, log);
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    log(`  loaded in ${loadSeconds.toFixed(0)} s`);
    const sizes = await tableSizes(client, tasks);
    poller = await startPoller(database.url, prefix, storageDir, user.auth, tasks);

    const statements = async () => {
      // Each caller runs as the code runs it; every statement it sends is captured with its values.
      const config = loadConfig({ ...process.env, DATABASE_URL: database.url, QUEUE_PREFIX: prefix });
      const logger = createLogger("bench", "error");
      const generationQueue = createQueue<GenerationJobData>(QUEUE_NAMES.generation, redis, prefix);
      const webhookQueue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, prefix);
      const polled = taskIdOf(measuredRow(tasks));
      const callers: Record<string, () => Promise<unknown>> = {
        "poll: API key": () => authenticateKey(db, user.auth),
        "poll: task": () => readTask(db, polled, user.userId),
        "poll: webhook": () => readDelivery(db, polled),
        // GET /api/v1/tasks: the first page, and a filtered page resumed from a position.
        "list tasks": () => listTasks(db, { userId: user.userId, limit: 20 }),
        "list tasks: failed, resumed": () =>
          listTasks(db, { userId: user.userId, limit: 20, status: "failed", after: { createdAt: new Date(Date.now() - 86_400_000), id: "task_f" } }),
        "reconcile tasks": () => reconcileTasks(db, generationQueue, config.reconcileIntervalMs * 2),
        "reconcile deliveries": () => reconcileDeliveries({ config, db, webhookQueue, logger }),
        "purge idempotency keys": () => purgeExpiredIdempotencyKeys(db),
        // One batch of 1,000 a run, as the worker's job does (its media removal finds no files here).
        "purge finished tasks": () => purgeFinishedTasks({ db, storage, retention: { taskDays: PURGE_DAYS, archive: "off" } }, { maxBatches: 1 }),
        "remove expired media": () => removeExpiredMedia({ db, storage, retention: { mediaDays: PURGE_DAYS } }, { maxBatches: 1 }),
      };
      const times: Record<string, number> = {};
      for (const [name, run] of Object.entries(callers)) {
        const runs: number[] = [];
        for (let i = 0; i < RUNS; i++) {
          caller = i === 0 ? name : "";
          const started = performance.now();
          await run();
          runs.push(performance.now() - started);
        }
        caller = "";
        times[name] = percentile(runs, 50);
        log(`  ${label}, ${name}: ${times[name]!.toFixed(2)} ms (median of ${RUNS}; ${runs.map((r) => r.toFixed(1)).join(" / ")})`);
      }
      await Promise.all([generationQueue.close(), webhookQueue.close()]);
      const big = new Set(sizes.filter((size) => size.rows > 10_000).map((size) => size.table));
      const explained: Measured["statements"] = [];
      for (const statement of captured) {
        const { plan, ms } = await explain(client, statement);
        explained.push({ caller: statement.caller, sql: statement.sql, ms, plan, problems: planProblems(statement.caller, plan, big) });
      }
      return { callers: times, statements: explained };
    };
    const purge = async (): Promise<PurgeMeasured> => {
      const before = await tableSizes(client, tasks);
      log(`  ${label}: polls and submissions for ${PURGE_BASELINE_MS / 1000} s without a purge`);
      const baseline = await poller!.during(new Promise((resolve) => setTimeout(resolve, PURGE_BASELINE_MS)));
      log(`  ${label}: purge of the tasks finished more than ${PURGE_DAYS} days ago, polls and submissions running`);
      const batches: Array<PurgeBatch & { ms: number }> = [];
      let batchStarted = performance.now();
      const started = performance.now();
      const purging = purgeFinishedTasks(
        { db, storage, retention: { taskDays: PURGE_DAYS, archive: "off" } },
        {
          maxBatches: Number.MAX_SAFE_INTEGER,
          ...(PURGE_UNTIL === undefined ? {} : { signal: AbortSignal.timeout(Math.max(0, PURGE_UNTIL - Date.now())) }),
          onBatch: (batch) => {
            const now = performance.now();
            batches.push({ ...batch, ms: now - batchStarted });
            batchStarted = now;
            if (batches.length % 100 === 0) {
              const removed = batches.reduce((sum, b) => sum + b.tasks, 0);
              log(`    ${batches.length} batches, ${removed.toLocaleString("en-US")} tasks, ${((now - started) / 1000).toFixed(0)} s`);
            }
          },
        },
      );
      const during = await poller!.during(purging);
      const result = await purging;
      const seconds = (performance.now() - started) / 1000;
      const stopped = PURGE_UNTIL !== undefined && Date.now() >= PURGE_UNTIL;
      const after = await tableSizes(client, tasks);
      const vacuumStarted = performance.now();
      await client.query(`VACUUM ${LOADED_TABLES.map((table) => `"${table}"`).join(", ")}`);
      const vacuumSeconds = (performance.now() - vacuumStarted) / 1000;
      const vacuumed = await tableSizes(client, tasks);
      return {
        retentionDays: PURGE_DAYS,
        seconds,
        batches: batches.length,
        tasks: result.tasks,
        rows: result.tasks + result.ledgerEntries + result.dependents - result.carried,
        carried: result.carried,
        slowestBatchMs: batches.reduce((max, batch) => Math.max(max, batch.ms), 0),
        largestBatch: batches.reduce((max, batch) => Math.max(max, batch.tasks), 0),
        stopped,
        baseline: latencies(baseline),
        during: latencies(during),
        before,
        after,
        vacuumed,
        vacuumSeconds,
      };
    };
    return { label, tasks, loadSeconds, steps, sizes, poller, statements, purge, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * A random task of the measured user (rows i with i % users = 0), among those the purge keeps (the
 * newest PURGE_DAYS less a day): a poll must find its task before, during and after the purge.
 */
function measuredRow(tasks: number): number {
  const first = Math.floor((tasks * Math.max(0, DATA_MIX.spanDays - PURGE_DAYS + 1)) / DATA_MIX.spanDays / DATA_MIX.users);
  const last = Math.floor(tasks / DATA_MIX.users);
  return (first + 1 + randomInt(Math.max(1, last - first))) * DATA_MIX.users;
}

async function tableSizes(client: pg.Client, tasks: number): Promise<TableSize[]> {
  const sizes: TableSize[] = [];
  for (const table of LOADED_TABLES) {
    const { rows } = await client.query<{ rows: string; total: string; heap: string; indexes: string }>(
      `SELECT (SELECT count(*) FROM "${table}") AS rows, pg_total_relation_size($1) AS total, pg_table_size($1) AS heap, pg_indexes_size($1) AS indexes`,
      [table],
    );
    const row = rows[0]!;
    sizes.push({
      table,
      rows: Number(row.rows),
      totalBytes: Number(row.total),
      heapBytes: Number(row.heap),
      indexBytes: Number(row.indexes),
      bytesPerTask: Number(row.total) / tasks,
    });
  }
  return sizes;
}

interface Poller {
  /** `count` polls, POLL_LANES at a time: each one's latency, and the CPU of the gateway and PostgreSQL over them. */
  round(count: number): Promise<{ times: number[]; cpu: CpuSample }>;
  /** Polls POLL_LANES at a time and submissions one at a time until `until` settles. */
  during(until: Promise<unknown>): Promise<{ times: number[]; submitted: number }>;
  stop(): Promise<void>;
}

function latencies(run: { times: number[]; submitted: number }): PurgeMeasured["baseline"] {
  return { p50: percentile(run.times, 50), p99: percentile(run.times, 99), count: run.times.length, submitted: run.submitted };
}

/** GET /api/v1/tasks/{id} (half with include=webhook) of random tasks of one user, through a real gateway process. */
async function startPoller(databaseUrl: string, prefix: string, storageDir: string, auth: string, tasks: number): Promise<Poller> {
  const port = await closedPort();
  const gateway = await startApp("gateway", {
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    QUEUE_PREFIX: prefix,
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    STORAGE_DIR: storageDir,
    GATEWAY_METRICS_PORT: "0",
    POLL_RATE_PER_SEC: "100000",
    POLL_RATE_BURST: "100000",
    SUBMIT_RATE_PER_SEC: "100000",
    SUBMIT_RATE_BURST: "100000",
    LOG_LEVEL: "warn",
  });
  const one = async () => {
    const include = randomInt(2) === 0 ? "?include=webhook" : "";
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/tasks/${taskIdOf(measuredRow(tasks))}${include}`, { headers: { Authorization: auth } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`poll answered ${res.status}`);
    return performance.now() - started;
  };
  const submit = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/detect`, {
      method: "POST",
      headers: { Authorization: auth, "Content-Type": "application/json" },
      body: JSON.stringify({ model: "sim-detect-1", text: `A paragraph submitted during the purge ${randomInt(1e9)}.` }),
    });
    await res.arrayBuffer();
    if (res.status !== 202) throw new Error(`submission answered ${res.status}`);
  };
  return {
    async round(count) {
      const times: number[] = [];
      const stop = sampleCpu({ gateway: () => [gateway.child.pid!], postgres: () => pidsNamed("postgres") });
      await Promise.all(
        Array.from({ length: POLL_LANES }, async () => {
          while (times.length < count) times.push(await one());
        }),
      );
      return { times, cpu: stop() };
    },
    async during(until) {
      let done = false;
      const finished = until.then(
        () => (done = true),
        () => (done = true),
      );
      const times: number[] = [];
      let submitted = 0;
      await Promise.all([
        ...Array.from({ length: POLL_LANES }, async () => {
          while (!done) times.push(await one());
        }),
        (async () => {
          while (!done) {
            await submit();
            submitted++;
          }
        })(),
        finished,
      ]);
      return { times, submitted };
    },
    stop: () => gateway.kill("SIGTERM"),
  };
}

/** Latencies and CPU of several rounds as one figure. */
function pollFigure(rounds: Array<{ times: number[]; cpu: CpuSample }>): Measured["poll"] {
  const times = rounds.flatMap((round) => round.times);
  const cpu: CpuSample = { ms: {}, wallMs: rounds.reduce((sum, round) => sum + round.cpu.wallMs, 0) };
  for (const round of rounds) for (const [name, ms] of Object.entries(round.cpu.ms)) cpu.ms[name] = (cpu.ms[name] ?? 0) + ms;
  return {
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    count: times.length,
    cpu: `${((times.length / cpu.wallMs) * 1000).toFixed(0)} polls/s at ${POLL_LANES} at a time; ${cpuPerUnit(cpu, times.length)}`,
  };
}

/** EXPLAIN ANALYZE of a captured statement with its values, in a transaction rolled back (the purge deletes). */
async function explain(client: pg.Client, statement: Statement): Promise<{ plan: string; ms: number }> {
  await client.query("BEGIN");
  try {
    const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${statement.sql}`, statement.values);
    const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
    const ms = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? Number.NaN);
    return { plan, ms };
  } finally {
    await client.query("ROLLBACK");
  }
}

/**
 * A sequential scan of a big table, a node that read and threw away more than MAX_ROWS_REMOVED
 * rows, or a task listing not read in order from its (user_id, created_at, id) index.
 */
function planProblems(caller: string, plan: string, big: Set<string>): string[] {
  const problems: string[] = [];
  if (caller.startsWith("list tasks") && !/Index Scan (Backward )?using tasks_user_id_created_at_id_idx/.test(plan)) problems.push("listing not an index scan");
  for (const match of plan.matchAll(/Seq Scan on "?(\w+)"?/g)) if (big.has(match[1]!)) problems.push(`Seq Scan on ${match[1]}`);
  for (const match of plan.matchAll(/Rows Removed by (Filter|Index Recheck): (\d+)/g)) {
    if (Number(match[2]) > MAX_ROWS_REMOVED) problems.push(`${match[2]} rows removed by ${match[1]!.toLowerCase()}`);
  }
  return problems;
}

async function deleteKeys(redis: ReturnType<typeof createRedis>, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/gen";
// Both databases exist at once so that their polls can alternate: other load on the machine drifts
// over minutes, and a comparison must not measure that drift.
const emptyDb = await prepare("empty", EMPTY_TASKS);
let empty: Measured;
let loaded: Measured;
let purged: PurgeMeasured;
try {
  const loadedDb = await prepare("loaded", TASKS);
  try {
    const rounds = new Map<Prepared, Array<{ times: number[]; cpu: CpuSample }>>([
      [emptyDb, []],
      [loadedDb, []],
    ]);
    for (const db of rounds.keys()) await db.poller.round(200);
    for (let round = 0; round < POLL_ROUNDS; round++) {
      for (const [db, results] of rounds) results.push(await db.poller.round(Math.ceil(POLLS / POLL_ROUNDS)));
    }
    const [emptyPoll, loadedPoll] = [pollFigure(rounds.get(emptyDb)!), pollFigure(rounds.get(loadedDb)!)];
    for (const [label, poll] of [
      ["empty", emptyPoll],
      ["loaded", loadedPoll],
    ] as const)
      log(`${label}: poll p50 ${poll.p50.toFixed(2)} ms, p99 ${poll.p99.toFixed(2)} ms; ${poll.cpu}`);
    const measured = (db: Prepared, poll: Measured["poll"], run: Pick<Measured, "callers" | "statements">): Measured => ({
      label: db.label,
      tasks: db.tasks,
      loadSeconds: db.loadSeconds,
      steps: db.steps,
      sizes: db.sizes,
      poll,
      ...run,
    });
    empty = measured(emptyDb, emptyPoll, await emptyDb.statements());
    loaded = measured(loadedDb, loadedPoll, await loadedDb.statements());
    purged = await loadedDb.purge();
  } finally {
    await loadedDb.close();
  }
} finally {
  await emptyDb.close();
}

const lines: string[] = [];
lines.push(`\nData scale: ${TASKS.toLocaleString("en-US")} tasks (mix: ${JSON.stringify(DATA_MIX)}), loaded in ${loaded.loadSeconds.toFixed(0)} s`);
lines.push(
  `load steps: ${loaded.steps
    .filter((s) => !s.what.startsWith("index "))
    .map((s) => `${s.what} ${(s.ms / 1000).toFixed(1)} s`)
    .join(", ")}, indexes ${(loaded.steps.filter((s) => s.what.startsWith("index ")).reduce((sum, s) => sum + s.ms, 0) / 1000).toFixed(1)} s`,
);
lines.push(`\n| | empty (${EMPTY_TASKS.toLocaleString("en-US")} tasks) | ${TASKS.toLocaleString("en-US")} tasks | ratio |`, "|---|---|---|---|");
lines.push(`| poll p50 | ${empty.poll.p50.toFixed(2)} ms | ${loaded.poll.p50.toFixed(2)} ms | ${(loaded.poll.p50 / empty.poll.p50).toFixed(2)} |`);
lines.push(`| poll p99 | ${empty.poll.p99.toFixed(2)} ms | ${loaded.poll.p99.toFixed(2)} ms | ${(loaded.poll.p99 / empty.poll.p99).toFixed(2)} |`);
for (const name of Object.keys(loaded.callers))
  lines.push(
    `| ${name} (whole run, median) | ${empty.callers[name]!.toFixed(2)} ms | ${loaded.callers[name]!.toFixed(2)} ms | ${(loaded.callers[name]! / empty.callers[name]!).toFixed(2)} |`,
  );
lines.push(`\npoll CPU, empty: ${empty.poll.cpu}\npoll CPU, loaded: ${loaded.poll.cpu}`);
for (const s of loaded.statements.filter((statement) => statement.caller.startsWith("list tasks")))
  lines.push(
    `${s.caller}: ${s.ms.toFixed(3)} ms at ${TASKS.toLocaleString("en-US")} tasks (EXPLAIN ANALYZE), ${/Index Scan[^(]*/.exec(s.plan)?.[0]?.trim() ?? "NOT an index scan"}`,
  );
lines.push(`\n| table | rows | rows per task | total | heap | indexes | bytes per row | bytes per task |`, "|---|---|---|---|---|---|---|---|");
for (const s of loaded.sizes)
  lines.push(
    `| ${s.table} | ${s.rows.toLocaleString("en-US")} | ${(s.rows / TASKS).toFixed(2)} | ${mb(s.totalBytes)} | ${mb(s.heapBytes)} | ${mb(s.indexBytes)} | ${(s.totalBytes / Math.max(1, s.rows)).toFixed(0)} | ${s.bytesPerTask.toFixed(0)} |`,
  );
const totalPerTask = loaded.sizes.reduce((sum, s) => sum + s.bytesPerTask, 0);
lines.push(`| all | | | ${mb(loaded.sizes.reduce((sum, s) => sum + s.totalBytes, 0))} | | | | ${totalPerTask.toFixed(0)} |`);
const p = purged;
lines.push(
  `\nTask retention (TASK_RETENTION_DAYS=${p.retentionDays} of ${DATA_MIX.spanDays} days loaded, ${TASKS.toLocaleString("en-US")} tasks): ${p.tasks.toLocaleString("en-US")} tasks and ${p.rows.toLocaleString("en-US")} rows in all removed in ${p.seconds.toFixed(1)} s (${p.batches} batches of up to ${p.largestBatch.toLocaleString("en-US")} tasks, slowest ${p.slowestBatchMs.toFixed(0)} ms): **${(p.tasks / p.seconds).toFixed(0)} tasks/s, ${(p.rows / p.seconds).toFixed(0)} rows/s**; ${p.carried} carry-forward rows written (each replacing the user's last)${p.stopped ? `; STOPPED at PURGE_UNTIL (${process.env.PURGE_UNTIL}) with expired tasks left` : ""}`,
);
lines.push(`\n| polls through the gateway (${POLL_LANES} at a time, submissions one at a time) | polls | p50 | p99 | submissions |`, "|---|---|---|---|---|");
for (const [name, run] of [
  [`without a purge (${PURGE_BASELINE_MS / 1000} s)`, p.baseline],
  ["during the purge", p.during],
] as const)
  lines.push(`| ${name} | ${run.count} | ${run.p50.toFixed(2)} ms | ${run.p99.toFixed(2)} ms | ${run.submitted} |`);
lines.push(`| p99 ratio, during / without | | | ${(p.during.p99 / p.baseline.p99).toFixed(2)} | |`);
lines.push(
  `\n| table | rows before | rows after | size before | after the purge | after VACUUM (${p.vacuumSeconds.toFixed(1)} s) |`,
  "|---|---|---|---|---|---|",
);
for (const before of p.before) {
  const after = p.after.find((s) => s.table === before.table)!;
  const vacuumed = p.vacuumed.find((s) => s.table === before.table)!;
  lines.push(
    `| ${before.table} | ${before.rows.toLocaleString("en-US")} | ${after.rows.toLocaleString("en-US")} | ${mb(before.totalBytes)} | ${mb(after.totalBytes)} | ${mb(vacuumed.totalBytes)} |`,
  );
}
lines.push(`\nStatements at ${TASKS.toLocaleString("en-US")} tasks (execution time from EXPLAIN ANALYZE; empty database in brackets):`);
for (const [i, s] of loaded.statements.entries()) {
  const before = empty.statements.find((e) => e.sql === s.sql);
  lines.push(
    `\n--- ${s.caller}: ${s.ms.toFixed(3)} ms [${before ? before.ms.toFixed(3) : "?"} ms]${s.problems.length ? `  PROBLEM: ${s.problems.join("; ")}` : ""}`,
  );
  lines.push(s.sql.replace(/\s+/g, " ").trim());
  lines.push(s.plan);
  if (i > 40) break;
}
process.stdout.write(`${lines.join("\n")}\n`);
const dir = path.join(REPO_ROOT, "bench/results");
mkdirSync(dir, { recursive: true });
writeFileSync(
  path.join(dir, `data-scale-${quick ? "quick" : "latest"}.json`),
  `${JSON.stringify({ date: new Date().toISOString(), tasks: TASKS, mix: DATA_MIX, empty, loaded, purged }, null, 2)}\n`,
);
const problems = loaded.statements.filter((s) => s.problems.length > 0);
if (problems.length > 0) {
  process.stderr.write(
    `\nFAIL: ${problems.length} statement(s) read a big table wholesale:\n${problems.map((s) => `- ${s.caller}: ${s.problems.join("; ")}`).join("\n")}\n`,
  );
  process.exit(1);
}
process.exit(0);
