// CPU per dispatched task of the generation worker's terminal step alone, as the dispatch figure
// runs it (bench/delivery-throughput.ts dispatch()): the host ticket asked for alongside settleTask
// (prepareHandOff), then the worker's inline hand-off (lease registration, claim, render, POST, finish), at a steady
// rate. The HTTPS receiver runs in a process of its own (as in the bench), so this process's CPU
// is the sending side only; no gateway or delivery worker runs (the runner's host cap is raised so
// every attempt runs inline). CPU ms per task of this process, the receiver, this run's PostgreSQL
// backends and Redis, from /proc; DISPATCH_PROFILE=<file> writes a V8 CPU profile of the measured
// stretch only.
//
//   pnpm exec tsx --conditions=@gen/source bench/dispatch-cost.ts   (RATE=500 SECONDS=6 HOSTS=8 ROUNDS=2)
import { once } from "node:events";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import https from "node:https";
import { Session } from "node:inspector/promises";
import { loadConfig } from "@gen/config";
import { createDatabase } from "@gen/db";
import { createLogger } from "@gen/logger";
import { QUEUE_NAMES, createQueue, createRedis, type WebhookJobData } from "@gen/queues";
import { createScratchDatabase } from "../test/support/scratch-database.ts";
import { createRunningTasks } from "./support/bench-tasks.ts";
import { startReceiverProcess } from "./support/receiver-process.ts";
import { median, percentile } from "./support/load.ts";
import { handOffGate, inlineHandOff, settleAndHandOff } from "./support/inline-hand-off.ts";
import { CpuTally, postgresBackendsOf, sampleCpu } from "./support/proc-cpu.ts";

const RATE = Number(process.env.RATE ?? 500);
const SECONDS = Number(process.env.SECONDS ?? 6);
const HOSTS = Number(process.env.HOSTS ?? 8);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/gen";
const database = await createScratchDatabase();
const databaseName = new URL(database.url).pathname.slice(1);
const receiver = await startReceiverProcess(7);
let received = 0;
const receivedAll = async (count: number) => {
  const deadline = Date.now() + 60_000;
  for (;;) {
    received = 0;
    for (const list of receiver.posts.values()) received += list.length;
    if (received >= count) return;
    if (Date.now() > deadline) throw new Error(`receiver: ${received} of ${count} POSTs after 60 s`);
    await sleep(20);
  }
};

const db = createDatabase(database.url, { max: 20, connectTimeoutMs: 30_000 });
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = createRedis(redisUrl, "request");
if (redis.status !== "ready") await once(redis, "ready");
const redisPid = Number(/process_id:(\d+)/.exec(await redis.info("server"))?.[1] ?? 0);
const prefix = `bench_dc_${randomBytes(4).toString("hex")}`;
const config = loadConfig({
  DATABASE_URL: database.url,
  REDIS_URL: redisUrl,
  QUEUE_PREFIX: prefix,
  WEBHOOK_ALLOWED_CIDRS: receiver.childEnv.WEBHOOK_ALLOWED_CIDRS!,
  WEBHOOK_TIMEOUT_MS: "10000",
  WEBHOOK_RETRY_DELAY_MS: "40000",
  WEBHOOK_FINAL_ATTEMPT_MS: "300000",
  WEBHOOK_HOST_CONCURRENCY: "100000",
  // No delivery worker runs: every attempt must run inline, however long the machine stalls.
  DELIVERY_CONCURRENCY: "100000",
});
const webhookQueue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, prefix);
const { handOff, close: closeHandOff } = inlineHandOff(
  handOffGate(config, redis, webhookQueue, createLogger("bench", "warn")),
  db,
  receiver.childEnv.FAULT_HOSTS!,
  receiver.ca,
);
try {
  const userId = "usr_bench";
  await db.$sql.query("INSERT INTO users (id, credits) VALUES ($1, 2000000000)", [userId]);
  const urls = receiver.urls.slice(0, HOSTS);

  let sent = 0;
  const tasks = (rate: number, seconds: number) => createRunningTasks(db, userId, urls, Math.round(rate * seconds));
  async function dispatch(ids: string[], rate: number): Promise<number[]> {
    const lags: number[] = [];
    const begin = performance.now() + 50;
    await Promise.all(
      ids.map(async (id, i) => {
        await sleep(begin + (i * 1000) / rate - performance.now());
        const { settled } = await settleAndHandOff(db, handOff, id, urls[i % urls.length]!, userId);
        if (!settled) throw new Error(`task ${id} did not settle`);
        lags.push(Date.now() - settled.finishedAt!.getTime());
      }),
    );
    sent += ids.length;
    await receivedAll(sent);
    return lags;
  }

  // Warm-up: the pool's connections, TLS sessions, JIT, prepared statements.
  await dispatch(await tasks(50, 2), 50);
  await dispatch(await tasks(RATE, 1), RATE);
  // New TLS connections the sender opens (its agent's createConnection), to see keep-alive at work.
  let connections = 0;
  const createConnection = https.Agent.prototype.createConnection;
  https.Agent.prototype.createConnection = function (this: https.Agent, ...args: Parameters<typeof createConnection>) {
    connections++;
    return createConnection.apply(this, args);
  } as typeof createConnection;
  // Every round's tasks are written before the measured stretch (Prisma's createMany is the bench's, not ours).
  const rounds: string[][] = [];
  for (let round = 0; round < ROUNDS; round++) rounds.push(await tasks(RATE, SECONDS));
  const tally = new CpuTally();
  const session = process.env.DISPATCH_PROFILE ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 200 });
    await session.post("Profiler.start");
  }
  for (let round = 0; round < ROUNDS; round++) {
    const ids = rounds[round]!;
    const stop = sampleCpu({
      runner: () => [process.pid],
      receiver: () => [receiver.pid],
      postgres: () => postgresBackendsOf(databaseName),
      redis: () => (redisPid ? [redisPid] : []),
    });
    const lags = await dispatch(ids, RATE);
    const sample = stop();
    tally.add(sample, lags.length);
    const perTask = Object.fromEntries(Object.entries(sample.ms).map(([name, ms]) => [name, (ms / lags.length).toFixed(3)]));
    console.log(
      `round ${round + 1}: ${connections} new connections so far; ${lags.length} tasks at ${RATE}/s over ${HOSTS} hosts; hand-off done after settle p50 ${median(lags)} ms p99 ${percentile(lags, 99)} ms; CPU ms per task`,
      perTask,
    );
  }
  if (session) {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(process.env.DISPATCH_PROFILE!, JSON.stringify(profile));
    session.disconnect();
  }
  const mean = Object.fromEntries(Object.entries(tally.perUnit()).map(([name, ms]) => [name, Number(ms.toFixed(3))]));
  console.log("CPU ms per task over all rounds:", JSON.stringify(mean));
} finally {
  // Also when a round fails: the Redis and the PostgreSQL server are shared.
  await closeHandOff().catch(() => {});
  // Everything under this run's prefix (queues, host tickets) goes.
  for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 }) as AsyncIterable<string[]>) if (keys.length > 0) await redis.unlink(...keys);
  await webhookQueue.close();
  redis.disconnect();
  await db.$disconnect();
  await receiver.close();
  await database.drop();
}
