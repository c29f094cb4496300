// Webhook delivery schedule and dispatch latency with the DEFAULT durations (40 s retry delay,
// 300 s final attempt, 10 s timeout). Runs ~5.5 minutes against a throwaway PostgreSQL database and
// a QUEUE_PREFIX of its own on the local Redis; receivers are HTTPS servers on 127.0.0.1.
//
//   pnpm exec tsx --conditions=@gen/source bench/webhook-schedule.ts
//
// Environment: DATABASE_URL (a database on the server to create the throwaway one from),
// REDIS_URL, BENCH_RATE (tasks/s, default 150), BENCH_SECONDS (default 10), BENCH_SCHEDULE_TASKS
// (default 20), BENCH_WORKER_POOL (the worker's PostgreSQL pool, default 10 as in main.ts).
// Everything (PostgreSQL, Redis, worker, receivers, load) shares one machine, so the p99 says as
// much about that machine's other load as about the worker. Writes bench/results/webhook-schedule.json.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createDeliveryWorker } from "../apps/worker/src/delivery/index.ts";
import { loadConfig } from "../packages/config/src/index.ts";
import { createDatabase, type Database } from "../packages/db/src/index.ts";
import { newTaskId, newUserId } from "../packages/ids/src/index.ts";
import { createLogger } from "../packages/logger/src/index.ts";
import { QUEUE_NAMES, createQueue, createRedis, type WebhookJobData } from "../packages/queues/src/index.ts";
import { enqueueWebhookAttempt } from "../packages/webhook-delivery/src/index.ts";
import { createWebhookSender } from "../packages/webhook-sender/src/index.ts";
import { fakeResolver } from "../packages/webhook-sender/test/helpers/fake-resolver.ts";
import { startReceiver, type Receiver } from "../packages/webhook-sender/test/helpers/receiver.ts";
import { createTestCa, issueServerCert } from "../packages/webhook-sender/test/helpers/test-pki.ts";
import { createRunningTasks } from "./support/bench-tasks.ts";
import { deleteKeysUnder } from "../test/support/redis-keys.ts";
import { ensureUser, findTask, readDelivery } from "@gen/db";
import { findRows, insertRow } from "../test/support/db-rows.ts";

const HOST = "hooks.bench.example";
const RATE = Number(process.env.BENCH_RATE ?? 150);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SCHEDULE_TASKS = Number(process.env.BENCH_SCHEDULE_TASKS ?? 20);
const TOLERANCE_MS = 1_000;
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const log = (message: string) => process.stdout.write(`[${new Date().toISOString()}] ${message}\n`);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function summary(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    min: sorted[0] ?? Number.NaN,
    median: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

async function createBenchDatabase(baseUrl: string) {
  const name = `gen_bench_${randomBytes(4).toString("hex")}`;
  const admin = createDatabase(baseUrl);
  await admin.$sql.query(`CREATE DATABASE ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  execFileSync("pnpm", ["exec", "prisma", "migrate", "deploy"], { cwd: repoRoot, env: { ...process.env, DATABASE_URL: url.toString() }, stdio: "pipe" });
  return {
    url: url.toString(),
    async drop() {
      await admin.$sql.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.$disconnect();
    },
  };
}

/** A receiver that records when each task's POSTs arrived, keyed by the body's task id. */
async function receiver(tls: { key: string; cert: string }, status: number): Promise<Receiver & { arrivals: Map<string, number[]> }> {
  const arrivals = new Map<string, number[]>();
  const started = await startReceiver({
    tls,
    handler: (_request, response, body) => {
      const at = Date.now();
      const id = (JSON.parse(body.toString("utf8")) as { id: string }).id;
      arrivals.set(id, [...(arrivals.get(id) ?? []), at]);
      response.writeHead(status, { "content-type": "text/plain" });
      response.end("ok");
    },
  });
  return Object.assign(started, { arrivals });
}

async function createCompletedTask(db: Database, userId: string, url: string): Promise<string> {
  const id = newTaskId();
  await insertRow(db, "tasks", {
    id,
    userId,
    endpoint: "images",
    model: "sim-image-1",
    status: "completed",
    input: { prompt: "bench" },
    output: { image_urls: [`https://cdn.bench.example/tasks/${id}/0.png`] },
    webhookUrl: url,
    requestId: "req_000000000000000000000000",
    billingMethod: "flat",
    reservedCredits: 1,
    chargedCredits: 1,
    refundedCredits: 0,
    finishedAt: new Date(),
  });
  await insertRow(db, "webhook_deliveries", { taskId: id, url, status: "pending" });
  return id;
}

async function main(): Promise<void> {
  const baseUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/gen";
  log("creating a throwaway database");
  const database = await createBenchDatabase(baseUrl);
  const queuePrefix = `bench_${randomBytes(4).toString("hex")}`;
  // Default durations unless WEBHOOK_* are set (only to smoke-test the bench itself).
  const config = loadConfig({
    DATABASE_URL: database.url,
    REDIS_URL: process.env.REDIS_URL,
    QUEUE_PREFIX: queuePrefix,
    WEBHOOK_RETRY_DELAY_MS: process.env.WEBHOOK_RETRY_DELAY_MS,
    WEBHOOK_FINAL_ATTEMPT_MS: process.env.WEBHOOK_FINAL_ATTEMPT_MS,
    WEBHOOK_TIMEOUT_MS: process.env.WEBHOOK_TIMEOUT_MS,
    DELIVERY_CONCURRENCY: process.env.DELIVERY_CONCURRENCY,
    WEBHOOK_ALLOWED_CIDRS: "127.0.0.1/32",
    LOG_LEVEL: "silent",
  });
  // The load runs while the schedule tasks' attempt 2 falls due, so that timing is measured under load.
  const loadStartsAtMs = Math.max(0, config.webhookRetryDelayMs - 5_000);
  const workerDb = createDatabase(config.databaseUrl, { max: Number(process.env.BENCH_WORKER_POOL ?? 10) });
  const loadDb = createDatabase(config.databaseUrl, { max: 20 });
  const redis = createRedis(config.redisUrl, "blocking");
  const queue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, queuePrefix);
  const ca = await createTestCa("Bench CA");
  const cert = await issueServerCert([HOST], { ca });
  const ok = await receiver(cert, 200);
  const failing = await receiver(cert, 500);
  const sender = createWebhookSender({
    timeoutMs: config.webhookTimeoutMs,
    allowedCidrs: config.webhookAllowedCidrs,
    lookup: fakeResolver((hostname) => (hostname === HOST ? ["127.0.0.1"] : { code: "ENOTFOUND" })),
    ca: ca.cert,
  });
  const delivery = createDeliveryWorker({ config, db: workerDb, redis, logger: createLogger("bench", "silent"), sender });
  await delivery.worker.waitUntilReady();
  const userId = newUserId();
  await ensureUser(loadDb, userId);

  try {
    // Schedule: tasks whose receiver always answers 500, so all three attempts happen.
    log(
      `schedule: ${SCHEDULE_TASKS} tasks against a receiver answering 500 (retry ${config.webhookRetryDelayMs} ms, final ${config.webhookFinalAttemptMs} ms)`,
    );
    const scheduleUrl = `https://${HOST}:${failing.port}/hook`;
    const scheduleIds: string[] = [];
    const benchStart = Date.now();
    for (let i = 0; i < SCHEDULE_TASKS; i++) {
      const id = await createCompletedTask(loadDb, userId, scheduleUrl);
      await enqueueWebhookAttempt(queue, id, 1, 0);
      scheduleIds.push(id);
      await sleep(100);
    }

    // Dispatch latency: tasks made terminal at a steady rate, each handed off right after its commit.
    const total = Math.round(RATE * SECONDS);
    log(`dispatch: preparing ${total} running tasks`);
    const loadUrl = `https://${HOST}:${ok.port}/hook?token=bench`;
    const loadIds: string[] = [];
    for (let i = 0; i < total; i += 500) loadIds.push(...(await createRunningTasks(loadDb, userId, loadUrl, Math.min(500, total - i))));
    await sleep(benchStart + loadStartsAtMs - Date.now());
    log(`dispatch: ${RATE} tasks/s for ${SECONDS} s`);
    const committedAt = new Map<string, number>();
    const handedOffAt = new Map<string, number>();
    const cpuBefore = process.cpuUsage();
    const loadStart = Date.now();
    const fired: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      await sleep(loadStart + (i * 1000) / RATE - Date.now());
      const id = loadIds[i]!;
      fired.push(
        (async () => {
          const finishedAt = new Date();
          // The terminal commit, as cheap as possible: the generator shares the process with the worker.
          await loadDb.$sql
            .rows`UPDATE tasks SET status = 'completed', finished_at = ${finishedAt}, charged_credits = 1, refunded_credits = 0, output = ${JSON.stringify({ image_urls: [`https://cdn.bench.example/tasks/${id}/0.png`] })}::jsonb WHERE id = ${id}`;
          committedAt.set(id, finishedAt.getTime());
          handedOffAt.set(id, Date.now());
          await enqueueWebhookAttempt(queue, id, 1, 0);
        })(),
      );
    }
    await Promise.all(fired);
    const loadSeconds = (Date.now() - loadStart) / 1000;
    while (ok.arrivals.size < total && Date.now() - loadStart < 60_000) await sleep(20);
    const cpu = process.cpuUsage(cpuBefore);
    const cpuMsPerTask = (cpu.user + cpu.system) / 1000 / total;
    const fromHandOff = loadIds.filter((id) => ok.arrivals.has(id)).map((id) => ok.arrivals.get(id)![0]! - handedOffAt.get(id)!);
    const fromCommit = loadIds.filter((id) => ok.arrivals.has(id)).map((id) => ok.arrivals.get(id)![0]! - committedAt.get(id)!);
    const duplicates = loadIds.filter((id) => (ok.arrivals.get(id)?.length ?? 0) > 1).length;
    // Where the time goes: queue pickup and state read up to the claim, then render and send.
    const claims = new Map((await findRows(loadDb, "webhook_attempts", { taskId: loadIds, attemptNo: 1 })).map((row) => [row.taskId, row.startedAt.getTime()]));
    const toClaim = loadIds.filter((id) => claims.has(id)).map((id) => claims.get(id)! - handedOffAt.get(id)!);
    const claimToReceiver = loadIds.filter((id) => claims.has(id) && ok.arrivals.has(id)).map((id) => ok.arrivals.get(id)![0]! - claims.get(id)!);
    log(`dispatch: ${ok.arrivals.size}/${total} delivered`);

    // Wait for attempt 3 of every schedule task (the final delay after its task finished).
    const lastDue = benchStart + SCHEDULE_TASKS * 120 + config.webhookFinalAttemptMs + 15_000;
    for (let tick = 1; scheduleIds.some((id) => (failing.arrivals.get(id)?.length ?? 0) < 3) && Date.now() < lastDue; tick++) {
      await sleep(1_000);
      if (tick % 30 === 0)
        log(`schedule: ${scheduleIds.filter((id) => (failing.arrivals.get(id)?.length ?? 0) >= 3).length}/${SCHEDULE_TASKS} tasks have had attempt 3`);
    }
    await sleep(2_000);

    const attempt2Error: number[] = [];
    const attempt3Error: number[] = [];
    const attempt1Latency: number[] = [];
    let failedDeliveries = 0;
    for (const id of scheduleIds) {
      const task = (await findTask(loadDb, id))!;
      const attempts = await findRows(loadDb, "webhook_attempts", { taskId: id }, "attemptNo");
      const arrivals = failing.arrivals.get(id) ?? [];
      const first = attempts[0];
      if (arrivals[0] !== undefined) attempt1Latency.push(arrivals[0] - task.finishedAt!.getTime());
      if (first?.finishedAt && arrivals[1] !== undefined) attempt2Error.push(arrivals[1] - (first.finishedAt.getTime() + config.webhookRetryDelayMs));
      if (arrivals[2] !== undefined) attempt3Error.push(arrivals[2] - (task.finishedAt!.getTime() + config.webhookFinalAttemptMs));
      if ((await readDelivery(loadDb, id))!.status === "failed") failedDeliveries++;
    }

    const results = {
      date: new Date().toISOString(),
      node: process.version,
      config: {
        webhook_retry_delay_ms: config.webhookRetryDelayMs,
        webhook_final_attempt_ms: config.webhookFinalAttemptMs,
        webhook_timeout_ms: config.webhookTimeoutMs,
        delivery_concurrency: config.deliveryConcurrency,
      },
      schedule: {
        tasks: SCHEDULE_TASKS,
        deliveries_failed_after_3: failedDeliveries,
        attempt1_after_finish_ms: summary(attempt1Latency),
        attempt2_error_ms: { ...summary(attempt2Error), within_1s: attempt2Error.filter((error) => Math.abs(error) <= TOLERANCE_MS).length },
        attempt3_error_ms: { ...summary(attempt3Error), within_1s: attempt3Error.filter((error) => Math.abs(error) <= TOLERANCE_MS).length },
      },
      dispatch: {
        target_rate_per_s: RATE,
        achieved_rate_per_s: Math.round(total / loadSeconds),
        tasks: total,
        delivered: fromHandOff.length,
        duplicate_posts: duplicates,
        receiver_connections: ok.connections(),
        // Worker, receiver and load generator together (one process).
        process_cpu_ms_per_task: Math.round(cpuMsPerTask * 100) / 100,
        from_hand_off_ms: summary(fromHandOff),
        from_terminal_commit_ms: summary(fromCommit),
        hand_off_to_claim_ms: summary(toClaim),
        claim_to_receiver_ms: summary(claimToReceiver),
      },
    };

    const rows: Array<[string, string]> = [
      [
        `attempt 2 - (attempt 1 failure + ${config.webhookRetryDelayMs / 1000} s)`,
        `median ${results.schedule.attempt2_error_ms.median} ms, min ${results.schedule.attempt2_error_ms.min}, max ${results.schedule.attempt2_error_ms.max}; within 1 s: ${results.schedule.attempt2_error_ms.within_1s}/${SCHEDULE_TASKS}`,
      ],
      [
        `attempt 3 - (task finished + ${config.webhookFinalAttemptMs / 1000} s)`,
        `median ${results.schedule.attempt3_error_ms.median} ms, min ${results.schedule.attempt3_error_ms.min}, max ${results.schedule.attempt3_error_ms.max}; within 1 s: ${results.schedule.attempt3_error_ms.within_1s}/${SCHEDULE_TASKS}`,
      ],
      ["deliveries failed after attempt 3", `${failedDeliveries}/${SCHEDULE_TASKS}`],
      [
        "load",
        `${results.dispatch.achieved_rate_per_s} tasks/s for ${loadSeconds.toFixed(1)} s (${total} tasks), ${results.dispatch.delivered} delivered, ${duplicates} duplicate POSTs, ${results.dispatch.receiver_connections} TLS connections`,
      ],
      ["process CPU per task (worker + receiver + load)", `${results.dispatch.process_cpu_ms_per_task} ms`],
      [
        "dispatch latency, hand-off -> receiver",
        `median ${results.dispatch.from_hand_off_ms.median} ms, p99 ${results.dispatch.from_hand_off_ms.p99} ms, max ${results.dispatch.from_hand_off_ms.max} ms`,
      ],
      [
        "  of which hand-off -> claim (queue, state read)",
        `median ${results.dispatch.hand_off_to_claim_ms.median} ms, p99 ${results.dispatch.hand_off_to_claim_ms.p99} ms`,
      ],
      [
        "  of which claim -> receiver (render, send)",
        `median ${results.dispatch.claim_to_receiver_ms.median} ms, p99 ${results.dispatch.claim_to_receiver_ms.p99} ms`,
      ],
      [
        "dispatch latency, terminal commit -> receiver",
        `median ${results.dispatch.from_terminal_commit_ms.median} ms, p99 ${results.dispatch.from_terminal_commit_ms.p99} ms, max ${results.dispatch.from_terminal_commit_ms.max} ms`,
      ],
    ];
    const width = Math.max(...rows.map(([name]) => name.length));
    process.stdout.write(`\n${"measure".padEnd(width)} | result\n${"-".repeat(width)}-|-${"-".repeat(60)}\n`);
    for (const [name, value] of rows) process.stdout.write(`${name.padEnd(width)} | ${value}\n`);
    mkdirSync(path.join(repoRoot, "bench/results"), { recursive: true });
    writeFileSync(path.join(repoRoot, "bench/results/webhook-schedule.json"), `${JSON.stringify(results, null, 2)}\n`);
    log("wrote bench/results/webhook-schedule.json");
  } finally {
    await delivery.close();
    sender.close();
    await queue.close();
    await deleteKeysUnder(redis, queuePrefix).catch(() => undefined);
    redis.disconnect();
    await ok.close();
    await failing.close();
    await workerDb.$disconnect();
    await loadDb.$disconnect();
    await database.drop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
