// Webhook deliveries per second from one worker process against a bare got loop to the same
// keep-alive HTTPS receiver, and dispatch latency (terminal commit → POST at the receiver) with
// tasks finishing at 200 and at 500 per second; CPU per delivery of the worker, PostgreSQL and Redis
// from /proc next to each.
import os from "node:os";
import { loadConfig } from "@gen/config";
import { createDatabase } from "@gen/db";
import { createLogger } from "@gen/logger";
import { QUEUE_NAMES, createQueue, createRedis, type WebhookJobData } from "@gen/queues";
import { TaskStatus } from "@gen/domain";
import { settleTask } from "@gen/ledger";
import { handOffWebhook } from "@gen/webhook-delivery";
import type { BenchContext } from "./support/bench-context.ts";
import { createRunningTasks } from "./support/bench-tasks.ts";
import { startChild } from "./support/child.ts";
import { dispatchStages, type HandOffTimes } from "./support/dispatch-stages.ts";
import { cpuColumns, type Figure } from "./support/figure.ts";
import { median, percentile } from "./support/load.ts";
import { withOwnWorker, UNCAPPED_HOST } from "./support/own-worker.ts";
import { CpuTally, machineBusyMs, sampleCpu, wakeUps } from "./support/proc-cpu.ts";
import { traceStretch, tracing } from "./support/dispatch-trace.ts";
import { deliverBurst, warmDeliveries } from "./support/warm-deliveries.ts";

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

  // Warm-up of both senders (TLS sessions, JIT), for every shape measured below: spread over the
  // host names, then a burst to the one host the first figure sends to.
  await warmDeliveries(ctx, queue, receiver.urls, 200);
  await warmDeliveries(ctx, queue, receiver.url, 1_000);
  let gotCpuMs = 0;
  let gotCount = 0;
  const gotLoop = async (n: number, inFlight = concurrency) => {
    const child = await startChild("bench/support/got-loop.ts", {
      ...receiver.childEnv,
      URL: receiver.url,
      COUNT: String(n),
      CONCURRENCY: String(inFlight),
    });
    const { elapsedMs, cpuMs } = (await child.message) as { elapsedMs: number; cpuMs: number };
    await child.stop();
    if (inFlight === concurrency) {
      gotCpuMs += cpuMs;
      gotCount += n;
    }
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
    let stop: (() => ReturnType<ReturnType<typeof sampleCpu>>) | undefined;
    const elapsedMs = await deliverBurst(ctx, queue, urls, n, () => (stop = sampleCpu({ worker: () => [pid], ...ctx.sharedGroups })));
    tally.add(stop!(), n);
    return (n / elapsedMs) * 1000;
  };
  for (let round = 0; round < rounds; round++) {
    worker.push(await workerRound(workerPid, workerCpu));
    manyHosts.push(await workerRound(workerPid, manyHostsCpu, count, receiver.urls));
    baseline.push(await gotLoop(count));
  }
  // One host gets at most its cap in flight from the worker: the got loop held to the same number,
  // for the note (the judged ratio stays against the got loop at the worker's concurrency).
  const hostCap = loadConfig(stack.env).webhookHostConcurrency;
  const cappedBaseline = await gotLoop(count, Math.min(hostCap, concurrency));

  // The runner's own pool for the terminal statements (the generation worker's one pool): at a rate
  // past capacity on a saturated machine a connection can take longer than the product's 1 s to
  // come free, and the figure should report that as latency rather than end the run.
  if (tracing) {
    const name = new URL(ctx.database.url).pathname.slice(1);
    await db.$sql.query(`ALTER DATABASE "${name}" SET log_min_duration_statement = 5`);
    await db.$sql.query(`ALTER DATABASE "${name}" SET track_wal_io_timing = on`);
    console.log(`  [trace] database ${name}`);
  }
  const runnerDb = createDatabase(ctx.database.url, { max: 20, connectTimeoutMs: 30_000 });
  const handOff = { webhookQueue: queue, logger: createLogger("bench", "warn") };
  const dispatchUrls = process.env.BENCH_DISPATCH_HOSTS === "many" ? receiver.urls : [receiver.url];
  /** Tasks made terminal at `rate` for `seconds` as the generation worker's finish does it; their dispatch latencies (sorted) and CPU. */
  const dispatch = async (rate: number, seconds: number) => {
    const urls = dispatchUrls;
    const ids = await createRunningTasks(db, user.userId, urls, Math.max(1, Math.round(rate * seconds)));
    const finishedAt = new Map<string, number>();
    const times = new Map<string, HandOffTimes>();
    const cpu = new CpuTally();
    // The runner stands in for the generation worker here (settlement, hand-off): its CPU is counted too.
    const stop = sampleCpu({ worker: () => [workerPid], runner: () => [process.pid], ...ctx.sharedGroups });
    // The receiver's CPU and the whole machine's, for the note: how busy the 2 cores were, and how
    // much of that was work outside this run's processes (other test runs and builds on the machine).
    const stopReceiver = sampleCpu({ receiver: () => [receiver.pid] });
    const machineBefore = machineBusyMs();
    const wakeGroups = { worker: () => [workerPid], runner: () => [process.pid], pg: ctx.sharedGroups.postgres!, redis: ctx.sharedGroups.redis! };
    const wakes = () => Object.fromEntries(Object.entries(wakeGroups).map(([name, pids]) => [name, pids().reduce((sum, pid) => sum + wakeUps(pid), 0)]));
    const wakesBefore = wakes();
    // No ticket before the settlement any more: the trace's "ticketed" mark is the commit's start.
    const traced: { id: string; committing: number; ticketed: number; committed: number }[] = [];
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
        // The generation worker's terminal step (finish): the settlement (task row, ledger, balance), then attempt 1's job.
        const committing = Date.now();
        const settled = await settleTask(
          runnerDb,
          { id, reservedCredits: 4 },
          { status: TaskStatus.Completed, output: { image_urls: [`https://cdn.bench.example/${id}/0.png`] }, charge: 4 },
        );
        if (!settled) throw new Error(`dispatch: task ${id} did not settle`);
        const committed = Date.now();
        await handOffWebhook(handOff, settled);
        traced.push({ id, committing, ticketed: committing, committed });
        finishedAt.set(id, settled.finishedAt!.getTime());
        times.set(id, { committing, committed, enqueued: Date.now() });
      }),
    );
    await waitFor(() => ids.every((id) => receiver.posts.has(id)), 120_000, "dispatch deliveries");
    const sample = stop();
    cpu.add(sample, ids.length);
    const machineMs = machineBusyMs() - machineBefore;
    const wakesAfter = wakes();
    const wakesPerTask = Object.keys(wakesAfter)
      .map((name) => `${name} ${((wakesAfter[name]! - (wakesBefore[name] ?? 0)) / ids.length).toFixed(1)}`)
      .join(", ");
    const receiverMs = stopReceiver().ms.receiver!;
    const ours = sample.ms.worker! + sample.ms.runner! + sample.ms.postgres! + sample.ms.redis! + receiverMs;
    receiver.reportEvery(2);
    const offset = Date.now() - performance.now();
    if (endTrace) console.log(`  [trace ${rate}/s]\n    ${endTrace(traced, (epoch) => epoch - offset)}`);
    const lags = ids.map((id) => receiver.posts.get(id)![0]!.at - finishedAt.get(id)!).sort((a, b) => a - b);
    const stages = await dispatchStages(db, redis, queue, ids, times, (id) => receiver.posts.get(id)![0]!.at);
    const duplicates = ids.filter((id) => receiver.posts.get(id)!.length > 1).length;
    const machine = `machine ${Math.round((100 * machineMs) / (os.cpus().length * sample.wallMs))}% busy, ${(machineMs / ids.length).toFixed(2)} ms per task (receiver ${(receiverMs / ids.length).toFixed(2)}, outside this run's processes ${(Math.max(0, machineMs - ours) / ids.length).toFixed(2)}); main-thread wake-ups per task: ${wakesPerTask}`;
    return {
      n: ids.length,
      p50: median(lags),
      p99: percentile(lags, 99),
      max: lags[lags.length - 1]!,
      cpu,
      note: `${ids.length} tasks over ${seconds} s, ${duplicates} duplicates; ${stages}; ${machine}`,
    };
  };
  // The sender's connections and TLS sessions, the pool's connections and the JIT, as a generation
  // worker in service has them: one unreported second at a low rate first.
  await dispatch(25, 1);
  // Capacity: the highest of these rates whose dispatch p50 stays under 50 ms (short stretches,
  // rising until one does not).
  const probeSeconds = ctx.quick ? 2 : 4;
  const probes: string[] = [];
  let capacity = 0;
  for (const rate of [10, 25, 50, 100, 150, 200, 300, 400, 500, 650, 800, 1000]) {
    const probe = await dispatch(rate, probeSeconds);
    probes.push(`${rate}/s p50 ${probe.p50} ms`);
    if (probe.p50 >= 50) break;
    capacity = rate;
  }
  const hostsNote = dispatchUrls.length === 1 ? "all tasks to one receiver host" : `tasks spread over ${dispatchUrls.length} receiver host names`;
  const dispatchFigures: Figure[] = [
    {
      name: "dispatch capacity (highest rate with p50 < 50 ms)",
      value: capacity,
      unit: "tasks/s",
      note: `${hostsNote}; probes of ${probeSeconds} s each: ${probes.join(", ")}`,
    },
  ];
  for (const [share, p99Target] of [
    [0.5, 30],
    [0.9, 250],
  ] as const) {
    const rate = Math.max(1, Math.round(capacity * share));
    const run = await dispatch(rate, ctx.quick ? 3 : 10);
    dispatchFigures.push(
      {
        name: `dispatch p50 at ${share * 100}% of capacity (${rate} tasks/s)`,
        value: run.p50,
        unit: "ms",
        cpu: cpuColumns(run.cpu.perUnit()),
        unitsTarget: 8,
        target: "CPU per dispatched task <= 8 units",
        note: `${hostsNote}; CPU per task: the worker (pickup, decision read, cap, claim, render, POST, finish), the runner (settlement, enqueue), PostgreSQL and Redis; the receiver's is the customer's side and not counted; ${run.note}`,
      },
      {
        name: `dispatch p99 at ${share * 100}% of capacity (${rate} tasks/s)`,
        value: run.p99,
        unit: "ms",
        target: `<= ${p99Target} ms`,
        pass: run.p99 <= p99Target,
        note: `max ${run.max} ms`,
      },
    );
  }

  // CPU per dispatched task where the fixed costs of the processes (timers, polling, stalled checks)
  // are spread over many tasks: a burst settled 32 at a time and delivered as fast as the worker
  // can, over the receiver's host names (so that no one host's cap adds delayed turns).
  const burstCount = ctx.quick ? 600 : 3000;
  const burstIds = await createRunningTasks(db, user.userId, receiver.urls, burstCount);
  const burstCpu = new CpuTally();
  const stopBurst = sampleCpu({ worker: () => [workerPid], runner: () => [process.pid], ...ctx.sharedGroups });
  const burstStarted = performance.now();
  let nextBurst = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (nextBurst < burstIds.length) {
        const id = burstIds[nextBurst++]!;
        const settled = await settleTask(runnerDb, { id, reservedCredits: 4 }, { status: TaskStatus.Completed, output: { image_urls: [] }, charge: 4 });
        if (settled) await handOffWebhook(handOff, settled);
      }
    }),
  );
  await waitFor(() => burstIds.every((id) => receiver.posts.has(id)), 120_000, "dispatch burst deliveries");
  burstCpu.add(stopBurst(), burstCount);
  const burstRate = (burstCount / (performance.now() - burstStarted)) * 1000;
  dispatchFigures.push({
    name: `dispatched tasks at throughput (${burstCount} settled 32 at a time, ${receiver.urls.length} receiver hosts)`,
    value: burstRate,
    unit: "/s",
    cpu: cpuColumns(burstCpu.perUnit()),
    unitsTarget: 8,
    target: "CPU per dispatched task <= 8 units",
    note: "settlement and enqueue (runner), then pickup, decision read, cap, claim, render, POST and finish (worker), PostgreSQL and Redis, per task; terminal commit to POST for every task as fast as the machine goes",
  });

  // The same hand-off with the one receiver host's cap (WEBHOOK_HOST_CONCURRENCY, default 32 in
  // flight, the others parked) raised to the worker's concurrency, as the got loop has it: what
  // per-host isolation costs when every delivery goes to one host.
  const uncappedCpu = new CpuTally();
  const uncappedRate = await withOwnWorker(ctx, UNCAPPED_HOST, "worker-uncapped", async (w) => {
    await warmDeliveries(ctx, queue, receiver.url, 1_000);
    return workerRound(w.child.pid!, uncappedCpu);
  });
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
      note: `vs a bare got loop; ${count} deliveries per round, ${rounds} rounds, concurrency ${concurrency} both sides (the host cap holds the worker to ${Math.min(hostCap, concurrency)} in flight to the one host: against a got loop with that many in flight, ${cappedBaseline.toFixed(0)}/s, the ratio is ${(value / cappedBaseline).toFixed(2)}); worker ${worker.map((v) => v.toFixed(0)).join("/")}, got ${baseline.map((v) => v.toFixed(0)).join("/")}`,
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
