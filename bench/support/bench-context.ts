import { createDatabase, type Database } from "@gen/db";
import { startFaultStack, type FaultStack } from "../../test/faults/support/fault-stack.ts";
import { startHookReceiver, type HookReceiver } from "../../test/faults/support/hook-receiver.ts";
import { createScratchDatabase, type ScratchDatabase } from "../../test/support/scratch-database.ts";

export interface BenchContext {
  quick: boolean;
  database: ScratchDatabase;
  db: Database;
  receiver: HookReceiver;
  stack: FaultStack;
  user: { userId: string; auth: string };
  close(): Promise<void>;
}

/**
 * The real gateway and worker processes (as `pnpm start` runs them) on a throwaway database and a
 * QUEUE_PREFIX of their own, with an HTTPS receiver on a loopback address at :443 (the fault
 * suite's helpers: the apps map its name to loopback and trust its test CA).
 */
export async function createBenchContext(quick: boolean): Promise<BenchContext> {
  process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/gen";
  const database = await createScratchDatabase();
  const receiver = await startHookReceiver();
  const stack = await startFaultStack({
    databaseUrl: database.url,
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    env: { ...receiver.childEnv, LOG_LEVEL: "error", WEBHOOK_TIMEOUT_MS: "10000", WEBHOOK_RETRY_DELAY_MS: "40000", WEBHOOK_FINAL_ATTEMPT_MS: "300000", RECONCILE_INTERVAL_MS: "15000", JOB_LOCK_MS: "30000" },
  });
  const db = createDatabase(database.url, { max: 20 });
  const user = await stack.user(1_000_000_000);
  return {
    quick,
    database,
    db,
    receiver,
    stack,
    user,
    async close() {
      await stack.close();
      await receiver.close();
      await db.$disconnect();
      await database.drop();
    },
  };
}
