import { once } from "node:events";
import { createDatabase, type Database } from "@gen/db";
import { createRedis } from "@gen/queues";
import { startFaultStack, type FaultStack } from "../../test/faults/support/fault-stack.ts";
import { createScratchDatabase, type ScratchDatabase } from "../../test/support/scratch-database.ts";
import { pidsNamed, postgresBackendsOf, type ProcessGroup } from "./proc-cpu.ts";
import { startReceiverProcess, type BenchReceiver } from "./receiver-process.ts";
import { SHIPPED_TIMINGS } from "./shipped-timings.ts";

export interface BenchContext {
  quick: boolean;
  database: ScratchDatabase;
  db: Database;
  receiver: BenchReceiver;
  stack: FaultStack;
  user: { userId: string; auth: string };
  /**
   * PostgreSQL (this run's backends; every postgres process as an upper bound) and the Redis
   * server, sampled next to each subject. Names as in SHARED_GROUPS (figure.ts).
   */
  sharedGroups: Record<string, ProcessGroup>;
  close(): Promise<void>;
}

/** How many host names the bench's receiver answers to (see `receiver.urls`). */
const RECEIVER_HOSTS = 8;

/**
 * The real gateway and worker processes (as `pnpm start` runs them) on a throwaway database and a
 * QUEUE_PREFIX of their own, with an HTTPS receiver on a loopback address at :443 (the fault
 * suite's helpers: the apps map its name to loopback and trust its test CA).
 */
export async function createBenchContext(quick: boolean): Promise<BenchContext> {
  process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/gen";
  const database = await createScratchDatabase();
  // One receiver under RECEIVER_HOSTS names: the figures for many customers' endpoints spread
  // their tasks over them (the host cap is per name), the others use the first name only. It runs
  // in a process of its own, as a customer's server would (receiver-child.ts).
  const receiver = await startReceiverProcess(RECEIVER_HOSTS - 1);
  const stack = await startFaultStack({
    databaseUrl: database.url,
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    // BENCH_LOG_LEVEL=info measures the gateway with its request log on (one line per request).
    // BENCH_PROCESSES=2 runs the gateway as a cluster of 2 (GATEWAY_PROCESSES), bare Express likewise.
    env: {
      ...receiver.childEnv,
      GATEWAY_PROCESSES: process.env.BENCH_PROCESSES ?? "1",
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "error",
      ...SHIPPED_TIMINGS,
    },
  });
  const db = createDatabase(database.url, { max: 20 });
  const user = await stack.user(1_000_000_000);
  const redis = createRedis(stack.env.REDIS_URL!, "request");
  if (redis.status !== "ready") await once(redis, "ready");
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info("server"))?.[1] ?? 0);
  redis.disconnect();
  const databaseName = new URL(database.url).pathname.slice(1);
  return {
    quick,
    database,
    db,
    receiver,
    stack,
    user,
    sharedGroups: { postgres: () => postgresBackendsOf(databaseName), postgres_all: () => pidsNamed("postgres"), redis: () => (redisPid ? [redisPid] : []) },
    async close() {
      await stack.close();
      await receiver.close();
      await db.$disconnect();
      await database.drop();
    },
  };
}
