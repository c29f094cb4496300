// CPU of one task-reconciler run over N running tasks whose generation jobs are parked (delayed),
// as long upstream jobs leave them: every run finds all of them again. The worker side (this
// process), PostgreSQL (this run's backends) and Redis from /proc, the median of RECONCILE_RUNS
// runs after one warm-up run. A scratch database and a QUEUE_PREFIX of its own.
//
//   RECONCILE_TASKS=10000 pnpm exec tsx --conditions=@gen/source bench/reconcile-cost.ts
import { randomBytes } from "node:crypto";
import { createDatabase } from "@gen/db";
import { newUserId } from "@gen/ids";
import { GENERATION_JOB_OPTIONS, QUEUE_NAMES, createQueue, createRedis, generationJobId, type GenerationJobData } from "@gen/queues";
import { reconcileTasks } from "../apps/worker/src/reconcile-tasks.ts";
import { createScratchDatabase } from "../test/support/scratch-database.ts";
import { deleteKeysUnder } from "../test/support/redis-keys.ts";
import { insertUser } from "../test/support/db-rows.ts";
import { createRunningTasks } from "./support/bench-tasks.ts";
import { median } from "./support/load.ts";
import { pidsNamed, postgresBackendsOf, sampleCpu } from "./support/proc-cpu.ts";

const COUNT = Number(process.env.RECONCILE_TASKS ?? 10_000);
const RUNS = Number(process.env.RECONCILE_RUNS ?? 7);
const CHUNK = 5_000;

process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/gen";
const database = await createScratchDatabase();
const databaseName = new URL(database.url).pathname.slice(1);
const db = createDatabase(database.url, { max: 4 });
const redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", "blocking");
const prefix = `bench_reconcile_${randomBytes(4).toString("hex")}`;
const queue = createQueue<GenerationJobData>(QUEUE_NAMES.generation, redis, prefix);
try {
  const userId = newUserId();
  await insertUser(db, userId, 1_000_000);
  const ids = await createRunningTasks(db, userId, "https://hooks.bench.example/hook", COUNT);
  // Running longer than the reconciler's grace, their jobs parked until a poll ten minutes away.
  await db.$sql.query(`UPDATE tasks SET updated_at = now() - interval '1 minute'`);
  for (let i = 0; i < ids.length; i += CHUNK) {
    await queue.addBulk(
      ids
        .slice(i, i + CHUNK)
        .map((taskId) => ({ name: "generate", data: { taskId }, opts: { ...GENERATION_JOB_OPTIONS, jobId: generationJobId(taskId), delay: 600_000 } })),
    );
  }
  const groups = { worker: () => [process.pid], postgres: () => postgresBackendsOf(databaseName), redis: () => pidsNamed("redis-server") };
  const runs: { worker: number; postgres: number; redis: number; wall: number }[] = [];
  for (let run = 0; run <= RUNS; run++) {
    const stop = sampleCpu(groups);
    const enqueued = await reconcileTasks(db, queue, 30_000);
    const { ms, wallMs } = stop();
    if (enqueued !== 0) throw new Error(`the reconciler enqueued ${enqueued} tasks whose jobs are parked`);
    if (run > 0) runs.push({ worker: ms.worker!, postgres: ms.postgres!, redis: ms.redis!, wall: wallMs });
  }
  const of = (key: keyof (typeof runs)[number]) => median(runs.map((r) => r[key])).toFixed(1);
  process.stdout.write(
    `one task-reconciler run over ${COUNT.toLocaleString("en-US")} running tasks with parked jobs, median of ${RUNS}: ` +
      `worker ${of("worker")} ms, PostgreSQL ${of("postgres")} ms, Redis ${of("redis")} ms of CPU; ${of("wall")} ms wall\n`,
  );
} finally {
  await queue.close();
  await deleteKeysUnder(redis, prefix);
  redis.disconnect();
  await db.$disconnect();
  await database.drop();
}
