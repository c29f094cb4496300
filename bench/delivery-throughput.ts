// Webhook deliveries per second from one worker process against a bare got loop to the same
// keep-alive HTTPS receiver, and dispatch latency (terminal commit → POST at the receiver) with
// tasks finishing at 200 and at 500 per second; CPU per delivery of the worker, PostgreSQL and Redis
// from /proc next to each.
import os from "node:os";
import { createDatabase, type Database } from "@gen/db";
import { createLogger } from "@gen/logger";
import { loadConfig } from "@gen/config";
import { QUEUE_NAMES, WEBHOOK_JOB_OPTIONS, createQueue, createRedis, webhookJobId, type RedisClient, type WebhookJobData } from "@gen/queues";
import { firstAttemptHandOff, type HandOffDeps } from "@gen/webhook-delivery";
import { routeToLane } from "../apps/worker/src/delivery/host-gate.ts";
import type { Queue } from "bullmq";
import type { BenchContext } from "./support/bench-context.ts";
import { completeTasks, createRunningTasks } from "./support/bench-tasks.ts";
import { startChild } from "./support/child.ts";
import { dispatchStages, type HandOffTimes } from "./support/dispatch-stages.ts";
import { handOffGate, inlineHandOff, settleAndHandOff } from "./support/inline-hand-off.ts";
import { cpuColumns, type Figure } from "./support/figure.ts";
import { median, percentile } from "./support/load.ts";
import { withOwnWorker, UNCAPPED_HOST } from "./support/own-worker.ts";
import { CpuTally, machineBusyMs, sampleCpu, wakeUps } from "./support/proc-cpu.ts";
import { traceStretch, tracing } from "./support/dispatch-trace.ts";

/** How often the receiver reports arrivals during a dispatch stretch (its default: every 2 ms). */
const DISPATCH_REPORT_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not done after ${timeoutMs} ms`);
    await sleep(5);
  }
}

export async function deliveryThroughput(ctx: BenchContext): Promise<Figure[]> {
  const { stack, receiver, db, user } = ctx;
  const concurrency = Number(stack.env.DELIVERY_CONCURRENCY ?? 64);
  const count = ctx.quick ? 600 : 3000;
  const redis = createRedis(stack.env.REDIS_URL!, "request");
  const queue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, stack.env.QUEUE_PREFIX!);

  // Warm-up of both senders (TLS sessions, JIT).
  const warm = await createRunningTasks(db, user.userId, receiver.urls, 200);
  await completeTasks(db, warm);
  await queue.addBulk(
    warm.map((taskId) => ({ name: "deliver", data: { taskId, attempt: 1 }, opts: { ...WEBHOOK_JOB_OPTIONS, jobId: webhookJobId(taskId, 1) } })),
  );
  await waitFor(() => warm.every((id) => receiver.posts.has(id)), 60_000, "warm-up deliveries");
  let gotCpuMs = 0;
  let gotCount = 0;
  const gotLoop = async (n: number) => {
    const child = await startChild("bench/support/got-loop.ts", {
      ...receiver.childEnv,
      URL: receiver.url,
      COUNT: String(n),
      CONCURRENCY: String(concurrency),
    });
    const { elapsedMs, cpuMs } = (await child.message) as { elapsedMs: number; cpuMs: number };
    await child.stop();
    gotCpuMs += cpuMs;
    gotCount += n;
    return (n / elapsedMs) * 1000;
  };
  await gotLoop(200);
  gotCpuMs = gotCount = 0;
  const workerPid = stack.workers[0]!.child.pid!;
  const workerCpu = new CpuTally();
  const worker: number[] = [];
  const manyHosts: number[] = [];
  const manyHostsCpu = new CpuTally();
  const baseline: number[] = [];
  const rounds = ctx.quick ? 1 : 2;
  /** `n` completed tasks handed off at once to the worker process `pid`: deliveries per second. */
  const workerRound = async (pid: number, tally: CpuTally, n = count, urls: string | string[] = receiver.url) => {
    const ids = await createRunningTasks(db, user.userId, urls, n);
    await completeTasks(db, ids);
    const started = performance.now();
    const stop = sampleCpu({ worker: () => [pid], ...ctx.sharedGroups });
    await queue.addBulk(
      ids.map((taskId) => ({ name: "deliver", data: { taskId, attempt: 1 }, opts: { ...WEBHOOK_JOB_OPTIONS, jobId: webhookJobId(taskId, 1) } })),
    );
    await waitFor(() => ids.every((id) => receiver.posts.has(id)), 120_000, "worker deliveries");
    tally.add(stop(), n);
    return (n / (performance.now() - started)) * 1000;
  };
  for (let round = 0; round < rounds; round++) {
    worker.push(await workerRound(workerPid, workerCpu));
    manyHosts.push(await workerRound(workerPid, manyHostsCpu, count, receiver.urls));
    baseline.push(await gotLoop(count));
  }

  // The runner's own pool for the terminal statements (and inline attempts, as the generation
  // worker's one pool): at 500/s on a saturated machine a connection can take longer than the
  // product's 1 s to come free, and the figure should report that as latency rather than end the
  // run (the generation worker would retry the step).
  if (tracing) {
    const name = new URL(ctx.database.url).pathname.slice(1);
    await db.$sql.query(`ALTER DATABASE "${name}" SET log_min_duration_statement = 5`);
    await db.$sql.query(`ALTER DATABASE "${name}" SET track_wal_io_timing = on`);
    console.log(`  [trace] database ${name}`);
  }
  const runnerDb = createDatabase(ctx.database.url, { max: 20, connectTimeoutMs: 30_000 });
  const handOffKind = parseHandOff(process.env.BENCH_HANDOFF);
  const { handOff, close: closeHandOff } = generationHandOff(ctx, runnerDb, redis, queue, handOffKind);
  const dispatch = async (rate: number, urls: string[] = [receiver.url], seconds = ctx.quick ? 3 : 10) => {
    const ids = await createRunningTasks(db, user.userId, urls, rate * seconds);
    const hosts = urls.length === 1 ? "" : `, ${urls.length} receiver hosts`;
    const finishedAt = new Map<string, number>();
    const times = new Map<string, HandOffTimes>();
    const cpu = new CpuTally();
    // The runner stands in for the generation worker here (settlement, hand-off): its CPU is shown too.
    const stop = sampleCpu({ worker: () => [workerPid], runner: () => [process.pid], ...ctx.sharedGroups });
    // The receiver's CPU and the whole machine's, for the note: how busy the 2 cores were, and how
    // much of that was work outside this run's processes (other test runs and builds on the machine).
    const stopReceiver = sampleCpu({ receiver: () => [receiver.pid] });
    const machineBefore = machineBusyMs();
    const wakeGroups = { runner: () => [process.pid], pg: ctx.sharedGroups.postgres!, redis: ctx.sharedGroups.redis! };
    const wakes = () => Object.fromEntries(Object.entries(wakeGroups).map(([name, pids]) => [name, pids().reduce((sum, pid) => sum + wakeUps(pid), 0)]));
    const wakesBefore = wakes();
    const traced: { id: string; committing: number; ticketed: number; committed: number }[] = [];
    const walQuery = "SELECT wal_records, wal_write, wal_sync, wal_write_time, wal_sync_time, wal_buffers_full FROM pg_stat_wal";
    const wal0 = tracing ? (await db.$sql.query<Record<string, number>>(walQuery)).rows[0]! : undefined;
    const endTrace = tracing
      ? traceStretch({ runner: () => [process.pid], worker: () => [workerPid], receiver: () => [receiver.pid], ...ctx.sharedGroups })
      : undefined;
    // The receiver's reports of arrivals (IPC messages, 2 ms apart by default) would wake this
    // process about once per task; a generation worker gets no such messages. Their times are the
    // receiver's, so reporting them later changes no figure.
    receiver.reportEvery(DISPATCH_REPORT_MS);
    const begin = performance.now() + 50;
    await Promise.all(
      ids.map(async (id, i) => {
        await sleep(begin + (i * 1000) / rate - performance.now());
        // The generation worker's terminal step (finish): the receiver's ticket asked for alongside the
        // settlement (task row, ledger, balance), then attempt 1.
        const committing = Date.now();
        const { settled, committed, ticketed } = await settleAndHandOff(runnerDb, handOff, id, urls[i % urls.length]!, user.userId);
        if (!settled) throw new Error(`dispatch: task ${id} did not settle`);
        traced.push({ id, committing, ticketed, committed });
        finishedAt.set(id, settled.finishedAt!.getTime());
        times.set(id, { committing, ticketed, committed, enqueued: Date.now() });
      }),
    );
    await waitFor(() => ids.every((id) => receiver.posts.has(id)), 60_000, "dispatch deliveries");
    const sample = stop();
    cpu.add(sample, ids.length);
    const machineMs = machineBusyMs() - machineBefore;
    const wakesAfter = wakes();
    const wakesPerTask = Object.keys(wakesAfter)
      .map((name) => `${name} ${((wakesAfter[name]! - (wakesBefore[name] ?? 0)) / ids.length).toFixed(1)}`)
      .join(", ");
    const receiverMs = stopReceiver().ms.receiver!;
    const ours = sample.ms.worker! + sample.ms.runner! + sample.ms.postgres! + sample.ms.redis! + receiverMs;
    const machine = `machine ${Math.round((100 * machineMs) / (os.cpus().length * sample.wallMs))}% busy, ${(machineMs / ids.length).toFixed(2)} ms per task (receiver ${(receiverMs / ids.length).toFixed(2)}, outside this run's processes ${(Math.max(0, machineMs - ours) / ids.length).toFixed(2)}); main-thread wake-ups per task: ${wakesPerTask}`;
    receiver.reportEvery(2);
    const offset = Date.now() - performance.now();
    if (wal0) {
      const wal1 = (await db.$sql.query<Record<string, number>>(walQuery)).rows[0]!;
      console.log(
        `  [trace wal ${rate}/s${hosts}] ${Object.keys(wal1)
          .map((k) => `${k} ${(Number(wal1[k]) - Number(wal0[k])).toFixed(1)}`)
          .join(", ")}; ${new Date().toISOString()}`,
      );
    }
    if (endTrace) console.log(`  [trace ${rate}/s${hosts}]\n    ${endTrace(traced, (epoch) => epoch - offset)}`);
    const lags = ids.map((id) => receiver.posts.get(id)![0]!.at - finishedAt.get(id)!);
    const stages = await dispatchStages(db, redis, queue, ids, times, (id) => receiver.posts.get(id)![0]!.at);
    const duplicates = ids.filter((id) => receiver.posts.get(id)!.length > 1).length;
    const lagMedian = median(lags);
    const lagP99 = percentile(lags, 99);
    const columns = cpuColumns(cpu.perUnit());
    return [
      {
        name: `dispatch latency median at ${rate} tasks/s${hosts}`,
        value: lagMedian,
        unit: "ms",
        target: "<= 5 ms",
        pass: lagMedian <= 5,
        cpu: columns,
        note: `${ids.length} tasks over ${seconds} s, ${duplicates} duplicates; hand-off ${handOffKind}${process.env.BENCH_DISPATCH_HOST_CAP ? `, runner's host cap ${process.env.BENCH_DISPATCH_HOST_CAP}` : ""}; CPU per task includes the runner's settlement (PostgreSQL) and hand-off (Redis; inline: the attempt too); ${stages}; ${machine}`,
      },
      {
        name: `dispatch latency p99 at ${rate} tasks/s${hosts}`,
        value: lagP99,
        unit: "ms",
        target: "<= 30 ms",
        pass: lagP99 <= 30,
        note: `max ${Math.max(...lags)} ms`,
      },
    ] satisfies Figure[];
  };
  // The runner's own sender (inline hand-off) opens its connections and TLS sessions here, as the
  // worker's did in the warm-up above: a generation worker in service has them already.
  const warmDispatch = await createRunningTasks(db, user.userId, receiver.urls, 100);
  for (const [n, id] of warmDispatch.entries()) {
    await settleAndHandOff(runnerDb, handOff, id, receiver.urls[n % receiver.urls.length]!, user.userId);
    await sleep(10);
  }
  await waitFor(() => warmDispatch.every((id) => receiver.posts.has(id)), 60_000, "dispatch warm-up");
  // One unreported second at 200/s to the one host, then one over all of them: the sequential
  // warm-up above opens one pool connection and one TLS connection per host, and the first measured
  // rate would otherwise pay for the others' start (a new PostgreSQL backend and its first
  // statements; a TLS handshake, both sides of which run in this process) and the inline path's JIT,
  // which a generation worker in service has long paid (before this, the first figure's commit stage
  // read p99 200-300 ms against 14-23 ms for the same rate run later).
  await dispatch(200, [receiver.url], 1);
  await dispatch(200, receiver.urls, 1);
  // Tasks reach their terminal state at a steady rate, each settled and handed off by the product's
  // functions as the generation worker does (prepareHandOff: the host ticket asked for alongside
  // settleTask; then the hand-off, routed by host tickets).
  // Then the same with the tasks spread over the receiver's host names, as a fleet serving many
  // customers sees them: one host's cap (32 in flight by default) no longer decides the latency.
  const dispatchFigures = [
    ...(await dispatch(200)),
    ...(await dispatch(500)),
    ...(await dispatch(200, receiver.urls)),
    ...(await dispatch(500, receiver.urls)),
  ];

  // The same hand-off with the one receiver host's cap (WEBHOOK_HOST_CONCURRENCY, default 32 in
  // flight, the others parked) raised to the worker's concurrency, as the got loop has it: what
  // per-host isolation costs when every delivery goes to one host.
  const uncappedCpu = new CpuTally();
  const uncappedRate = await withOwnWorker(ctx, UNCAPPED_HOST, "worker-uncapped", async (w) => {
    await workerRound(w.child.pid!, new CpuTally(), 200); // warm-up, as the first worker had
    return workerRound(w.child.pid!, uncappedCpu);
  });
  await closeHandOff();
  redis.disconnect();
  await runnerDb.$disconnect();
  const value = median(worker);
  const base = median(baseline);
  return [
    {
      name: "webhook deliveries (one worker process)",
      value,
      unit: "/s",
      baseline: base,
      ratio: value / base,
      target: "ratio >= 0.6",
      pass: value / base >= 0.6,
      cpu: cpuColumns(workerCpu.perUnit(), gotCpuMs / gotCount),
      note: `vs a bare got loop; ${count} deliveries per round, ${rounds} rounds, concurrency ${concurrency} both sides; worker ${worker.map((v) => v.toFixed(0)).join("/")}, got ${baseline.map((v) => v.toFixed(0)).join("/")}`,
    },
    {
      name: `webhook deliveries, ${receiver.urls.length} receiver hosts (one worker process)`,
      value: median(manyHosts),
      unit: "/s",
      baseline: base,
      ratio: median(manyHosts) / base,
      target: "ratio >= 0.6",
      pass: median(manyHosts) / base >= 0.6,
      cpu: cpuColumns(manyHostsCpu.perUnit(), gotCpuMs / gotCount),
      note: `the same rounds with the tasks spread over ${receiver.urls.length} host names of the one receiver (default cap of 32 each: the worker's ${concurrency} in flight), as a worker serving many customers; the got loop posts to one name; worker ${manyHosts.map((v) => v.toFixed(0)).join("/")}`,
    },
    {
      name: "webhook deliveries, host cap raised",
      value: uncappedRate,
      unit: "/s",
      baseline: base,
      ratio: uncappedRate / base,
      cpu: cpuColumns(uncappedCpu.perUnit(), gotCpuMs / gotCount),
      note: `one round of ${count}, WEBHOOK_HOST_CONCURRENCY raised (the row above: the default 32 to the one receiver host)`,
    },
    ...dispatchFigures,
  ];
}

type HandOffKind = "inline" | "queued" | "plain";

function parseHandOff(value: string | undefined): HandOffKind {
  if (value === undefined || value === "inline" || value === "queued" || value === "plain") return value ?? "inline";
  throw new Error(`BENCH_HANDOFF must be inline, queued or plain, got ${value}`);
}

/**
 * The generation worker's hand-off of attempt 1, with the worker's settings (its environment as
 * startApp builds it). `inline` (the product's, createDeliveryWorker().handOff): routed by the
 * receiver host's tickets, and with a ticket the attempt runs in this process (claim, render, send,
 * finish), so the runner's CPU column includes it; without one it is queued for the worker process.
 * `queued`: routed the same way but always queued (the hand-off before inline attempts). `plain`:
 * one Queue.add and the ticket asked at pickup (as the gateway's cancel does).
 */
function generationHandOff(
  ctx: BenchContext,
  db: Database,
  redis: RedisClient,
  webhookQueue: Queue<WebhookJobData>,
  kind: HandOffKind,
): { handOff: HandOffDeps; close: () => Promise<void> } {
  const logger = createLogger("bench", "warn");
  if (kind === "plain") return { handOff: { webhookQueue, logger }, close: async () => undefined };
  // BENCH_DISPATCH_HOST_CAP: the runner's tickets per receiver host (the worker process keeps the stack's).
  const cap = process.env.BENCH_DISPATCH_HOST_CAP;
  const config = loadConfig({ ...process.env, ...ctx.stack.env, ...(cap ? { WEBHOOK_HOST_CONCURRENCY: cap } : {}) });
  const gate = handOffGate(config, redis, webhookQueue, logger);
  if (kind === "queued") {
    const route = firstAttemptHandOff(
      (taskId, attempt, url, customer, windowEndsAt) => routeToLane(gate, "main", taskId, attempt, url, customer, windowEndsAt),
      config,
    );
    return { handOff: { webhookQueue, logger, handOffWebhook: route }, close: () => gate.close() };
  }
  return inlineHandOff(gate, db, ctx.receiver.childEnv.FAULT_HOSTS!, ctx.receiver.ca);
}
