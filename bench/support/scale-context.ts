import { once } from "node:events";
import { createDatabase, type Database } from "@gen/db";
import { createRedis } from "@gen/queues";
import { startFaultStack, type FaultStack } from "../../test/faults/support/fault-stack.ts";
import { startHookReceiver, type HookReceiver } from "../../test/faults/support/hook-receiver.ts";
import { createScratchDatabase, type ScratchDatabase } from "../../test/support/scratch-database.ts";
import { pidsNamed, type ProcessGroup } from "./proc-cpu.ts";
import { SHIPPED_TIMINGS } from "./shipped-timings.ts";

export interface ScaleContext {
  quick: boolean;
  receiverMs: number;
  stack: FaultStack;
  receiver: HookReceiver;
  db: Database;
  redis: ReturnType<typeof createRedis>;
  user: { userId: string; auth: string };
  /** PostgreSQL (every postgres process) and the Redis server, sampled next to each subject. */
  sharedGroups: Record<string, ProcessGroup>;
  close(): Promise<void>;
}

/**
 * A gateway (the fault suite's stack, for submissions) on a throwaway database and QUEUE_PREFIX,
 * with no worker running: each figure starts the worker processes it measures. The receiver
 * answers every POST after `receiverMs`.
 */
export async function createScaleContext(quick: boolean, receiverMs: number): Promise<ScaleContext> {
  process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/gen";
  const database: ScratchDatabase = await createScratchDatabase();
  const receiver = await startHookReceiver(() => ({ status: 200, delayMs: receiverMs }));
  const stack = await startFaultStack({
    databaseUrl: database.url,
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    env: {
      ...receiver.childEnv,
      LOG_LEVEL: "error",
      ...SHIPPED_TIMINGS,
      DELIVERY_CONCURRENCY: "64",
      // One receiver host stands for many: its per-host cap must not be what the figure measures.
      WEBHOOK_HOST_CONCURRENCY: "10000",
    },
  });
  await stack.workers[0]?.kill("SIGTERM");
  const db = createDatabase(database.url, { max: 10 });
  const redis = createRedis(stack.env.REDIS_URL!, "request");
  if (redis.status !== "ready") await once(redis, "ready");
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info("server"))?.[1] ?? 0);
  const user = await stack.user(1_000_000_000);
  return {
    quick,
    receiverMs,
    stack,
    receiver,
    db,
    redis,
    user,
    sharedGroups: { postgres: () => pidsNamed("postgres"), redis: () => (redisPid ? [redisPid] : []) },
    async close() {
      redis.disconnect();
      await stack.close();
      await receiver.close();
      await db.$disconnect();
      await database.drop();
    },
  };
}
