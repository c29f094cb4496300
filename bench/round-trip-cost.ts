// CPU per round trip of the gateway's design, each alone: what the same-work floor of `pnpm bench`
// is made of, and what batching (one statement, one addBulk for many submissions) would change.
// Client (this process), PostgreSQL (this run's backends) and Redis CPU per operation from /proc,
// 32 operations in flight. About a minute; a scratch database and a QUEUE_PREFIX of its own.
//
//   pnpm exec tsx --conditions=@gen/source bench/round-trip-cost.ts
import { once } from "node:events";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Queue } from "bullmq";
import pg from "pg";
import { hashApiKey, newTaskId } from "@gen/ids";
import { GENERATION_JOB_OPTIONS, QUEUE_NAMES, createRedis, generationJobId } from "@gen/queues";
import { RateLimiter } from "../packages/rate-limit/src/index.ts";
import { createScratchDatabase } from "../test/support/scratch-database.ts";
import { REPO_ROOT } from "./support/child.ts";
import { measureOperation, printCosts, type OperationCost } from "./support/operation-cost.ts";
import { postgresBackendsOf } from "./support/proc-cpu.ts";
import { insertTask, readTask, userOfKey } from "./support/same-work-sql.ts";
import { deleteKeysUnder } from "../test/support/redis-keys.ts";

const LANES = 32;
const BATCH = 32;
const COUNT = Number(process.env.ROUND_TRIPS ?? 4000);
const PRICE = 4;

process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/gen";
const database = await createScratchDatabase();
const databaseName = new URL(database.url).pathname.slice(1);
const pool = new pg.Pool({ connectionString: database.url, max: 10 });
const redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", "request");
if (redis.status !== "ready") await once(redis, "ready");
const redisPid = Number(/process_id:(\d+)/.exec(await redis.info("server"))?.[1] ?? 0);
const prefix = `bench_rt_${randomBytes(4).toString("hex")}`;
const queue = new Queue(QUEUE_NAMES.generation, { connection: redis, prefix });
const limiter = new RateLimiter(redis, prefix);
const userId = "usr_bench";
const keyHash = hashApiKey("bench-key");
await pool.query("INSERT INTO users (id, credits) VALUES ($1, 2000000000)", [userId]);
await pool.query("INSERT INTO api_keys (id, user_id, key_hash) VALUES ('key_bench', $1, $2)", [userId, keyHash]);
const input = { prompt: "a lighthouse at dusk", size: "512x512" };
const polled = (await insertTask(pool, userId, "sim-image-1", input, PRICE))!.id;

/**
 * Submissions of one user gathered into ONE statement: one debit of the sum, then every task and
 * reserve row. A sketch of group commit's cost (a real one debits per user and answers each
 * request on its own), not product code.
 */
async function insertTasks(n: number): Promise<void> {
  const ids = Array.from({ length: n }, () => newTaskId());
  await pool.query(
    `WITH input AS (SELECT * FROM unnest($1::text[], $2::jsonb[]) AS i(id, input)),
          debit AS (UPDATE users SET credits = credits - $3::int * $5::int WHERE id = $4 AND credits >= $3::int * $5::int RETURNING id),
          task AS (INSERT INTO tasks (id, user_id, endpoint, model, status, input, request_id, billing_method, reserved_credits)
                   SELECT i.id, $4, 'images', 'sim-image-1', 'queued', i.input, 'req_bench', 'flat', $3 FROM input i, debit RETURNING id)
     INSERT INTO ledger_entries (user_id, task_id, kind, amount, delta) SELECT $4, i.id, 'reserve', $3, -$3 FROM input i, debit`,
    [ids, ids.map(() => JSON.stringify(input)), PRICE, userId, n],
  );
}

const enqueue = () => {
  const taskId = newTaskId();
  return queue.add("generate", { taskId }, { ...GENERATION_JOB_OPTIONS, jobId: generationJobId(taskId) });
};

const operations: { name: string; perCall: number; lanes: number; run: () => Promise<unknown> }[] = [
  { name: "key lookup (SELECT api_keys)", perCall: 1, lanes: LANES, run: () => userOfKey(pool, keyHash) },
  { name: "limiter (GCRA script)", perCall: 1, lanes: LANES, run: () => limiter.take("submit", userId, { perSec: 1e6, burst: 1e6 }) },
  { name: "submission statement (debit, task, reserve)", perCall: 1, lanes: LANES, run: () => insertTask(pool, userId, "sim-image-1", input, PRICE) },
  { name: `the same, ${BATCH} tasks in one statement`, perCall: BATCH, lanes: 2, run: () => insertTasks(BATCH) },
  { name: "enqueue (Queue.add)", perCall: 1, lanes: LANES, run: enqueue },
  {
    name: `enqueue, ${BATCH} jobs in one addBulk`,
    perCall: BATCH,
    lanes: 2,
    run: () =>
      queue.addBulk(
        Array.from({ length: BATCH }, () => newTaskId()).map((taskId) => ({
          name: "generate",
          data: { taskId },
          opts: { ...GENERATION_JOB_OPTIONS, jobId: generationJobId(taskId) },
        })),
      ),
  },
  { name: "poll select (task by id and user)", perCall: 1, lanes: LANES, run: () => readTask(pool, polled, userId) },
];

async function drive(calls: number, lanes: number, run: () => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next++ < calls) await run();
    }),
  );
}

const groups = { postgres: () => postgresBackendsOf(databaseName), redis: () => (redisPid ? [redisPid] : []) };
const rows: OperationCost[] = [];
try {
  for (const op of operations) {
    const calls = Math.ceil(COUNT / op.perCall);
    await drive(Math.ceil(calls / 4), op.lanes, op.run);
    rows.push(await measureOperation(op.name, calls * op.perCall, groups, () => drive(calls, op.lanes, op.run)));
  }
} finally {
  await queue.close();
  // The queue and the limiter's counters: everything under the prefix.
  await deleteKeysUnder(redis, prefix).catch(() => undefined);
  redis.disconnect();
  await pool.end();
  await database.drop();
}

printCosts(
  rows,
  `CPU ms per operation (per task or job for the batched rows), ${LANES} in flight (2 batches), ${COUNT} each; Redis is shared with other work (an upper bound).`,
);
const dir = path.join(REPO_ROOT, "bench/results");
mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, "round-trip-cost.json"), `${JSON.stringify({ date: new Date().toISOString(), lanes: LANES, count: COUNT, rows }, null, 2)}\n`);
process.exit(0);
