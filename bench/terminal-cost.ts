// CPU per terminal task of the generation worker's last step, each part alone: the settlement as it
// was (the task read, then the close statement) and as it is (the close statement only), and the
// hand-off of attempt 1 (one Queue.add). Client (this process), PostgreSQL (this run's
// backends) and Redis CPU per task from /proc, 32 in flight, as in round-trip-cost.ts. A scratch
// database and a QUEUE_PREFIX of its own; no worker consumes the jobs.
//
//   pnpm exec tsx --conditions=@gen/source bench/terminal-cost.ts
import { once } from "node:events";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createDatabase, findTask } from "@gen/db";
import { TaskStatus } from "@gen/domain";
import { settleTask, type TaskToSettle } from "@gen/ledger";
import { createLogger } from "@gen/logger";
import { QUEUE_NAMES, createQueue, createRedis, type WebhookJobData } from "@gen/queues";
import { handOffWebhook } from "@gen/webhook-delivery";
import { createScratchDatabase } from "../test/support/scratch-database.ts";
import { createRunningTasks } from "./support/bench-tasks.ts";
import { REPO_ROOT } from "./support/child.ts";
import { measureOperation, printCosts, type OperationCost } from "./support/operation-cost.ts";
import { postgresBackendsOf } from "./support/proc-cpu.ts";
import { deleteKeysUnder } from "../test/support/redis-keys.ts";

const LANES = 32;
const COUNT = Number(process.env.TERMINAL_TASKS ?? 3000);
const HOOK_URL = "https://hooks.bench.example/hook";

process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/gen";
const database = await createScratchDatabase();
const databaseName = new URL(database.url).pathname.slice(1);
const db = createDatabase(database.url, { max: 10 });
const redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", "request");
if (redis.status !== "ready") await once(redis, "ready");
const redisPid = Number(/process_id:(\d+)/.exec(await redis.info("server"))?.[1] ?? 0);
const prefix = `bench_term_${randomBytes(4).toString("hex")}`;
const webhookQueue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, prefix);
const logger = createLogger("bench", "error");
const userId = "usr_bench";
await db.$sql.query("INSERT INTO users (id, credits) VALUES ($1, 2000000000)", [userId]);
const outcome = (id: string) => ({ status: TaskStatus.Completed, output: { image_urls: [`https://cdn.bench.example/${id}/0.png`] }, charge: 4 });
const toSettle = (id: string): TaskToSettle => ({ id, reservedCredits: 4 });

const operations: { name: string; run: (id: string) => Promise<unknown> }[] = [
  {
    name: "settlement as before (task read, close statement)",
    run: async (id) => settleTask(db, (await findTask(db, id))!, outcome(id)),
  },
  { name: "settlement (close statement only)", run: (id) => settleTask(db, toSettle(id), outcome(id)) },
  { name: "hand-off (Queue.add)", run: (id) => handOffWebhook({ webhookQueue, logger }, { id, webhookUrl: HOOK_URL }) },
];

async function drive(ids: string[], run: (id: string) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      while (next < ids.length) await run(ids[next++]!);
    }),
  );
}

const groups = { postgres: () => postgresBackendsOf(databaseName), redis: () => (redisPid ? [redisPid] : []) };
const rows: OperationCost[] = [];
try {
  for (const op of operations) {
    // Each settlement needs open tasks of its own; a hand-off, jobs of new ids.
    const warm = await createRunningTasks(db, userId, HOOK_URL, Math.ceil(COUNT / 4));
    const ids = await createRunningTasks(db, userId, HOOK_URL, COUNT);
    await drive(warm, op.run);
    rows.push(await measureOperation(op.name, COUNT, groups, () => drive(ids, op.run)));
  }
} finally {
  await webhookQueue.close();
  await deleteKeysUnder(redis, prefix).catch(() => undefined);
  redis.disconnect();
  await db.$disconnect();
  await database.drop();
}

printCosts(rows, `CPU ms per terminal task, ${LANES} in flight, ${COUNT} each; Redis is shared with other work (an upper bound).`);
const dir = path.join(REPO_ROOT, "bench/results");
mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, "terminal-cost.json"), `${JSON.stringify({ date: new Date().toISOString(), lanes: LANES, count: COUNT, rows }, null, 2)}\n`);
process.exit(0);
