import type { Database } from "@gen/db";
import { createScratchDatabase, type ScratchDatabase } from "../../support/scratch-database.ts";
import { startFaultStack, type FaultStack } from "./fault-stack.ts";
import { startHookReceiver, type HookReceiver } from "./hook-receiver.ts";
import { until } from "./load.ts";
import { countRows, findRows } from "../../support/db-rows.ts";

/** The isolation scenarios' stage: a hanging receiver and a healthy one, the gateway and two workers on a scratch database. */
export interface IsolationStage {
  stack: FaultStack;
  /** Answers 200 at once. */
  healthy: HookReceiver;
  /** Stops all of it, the hanging receiver too. */
  close(): Promise<void>;
}

/** Starts it around `hanging` (which it then owns); `env` adds to (or overrides) what both scenarios share. */
export async function startIsolationStage(hanging: HookReceiver, env: Record<string, string>): Promise<IsolationStage> {
  const healthy = await startHookReceiver(() => ({ status: 200 }), hanging.ca);
  const both = (key: string) => `${hanging.childEnv[key]},${healthy.childEnv[key]}`;
  const database: ScratchDatabase = await createScratchDatabase();
  const receivers = () => Promise.all([healthy.close(), hanging.close()]);
  const stack = await startFaultStack({
    databaseUrl: database.url,
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    env: {
      FAULT_HOSTS: both("FAULT_HOSTS"),
      WEBHOOK_ALLOWED_CIDRS: both("WEBHOOK_ALLOWED_CIDRS"),
      NODE_EXTRA_CA_CERTS: hanging.childEnv.NODE_EXTRA_CA_CERTS!,
      WORKER_CONCURRENCY: "64",
      JOB_LOCK_MS: "30000",
      ...env,
    },
  }).catch(async (error: unknown) => {
    await database.drop();
    await receivers();
    throw error;
  });
  await stack.startWorker();
  return {
    stack,
    healthy,
    async close() {
      await stack.close();
      await receivers();
      await database.drop();
    },
  };
}

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** Attempt outcomes of the given tasks, "delivered 30, stale_claim 6" in `line`. */
export async function attemptOutcomes(db: Database, taskIds: string[]): Promise<{ rows: [string | null, number][]; line: string }> {
  const counts = new Map<string | null, number>();
  for (const attempt of await findRows(db, "webhook_attempts", { taskId: taskIds })) counts.set(attempt.outcome, (counts.get(attempt.outcome) ?? 0) + 1);
  const rows = [...counts];
  return { rows, line: rows.map(([outcome, count]) => `${outcome ?? "open"} ${count}`).join(", ") };
}

/**
 * Waits until every one of `taskIds`' webhooks is delivered or failed, then measures each one's
 * dispatch: task committed terminal -> its first POST at `receiver`, sorted.
 */
export async function healthyDispatch(
  stack: FaultStack,
  receiver: HookReceiver,
  taskIds: string[],
): Promise<{ latencies: number[]; tasks: { id: string; finishedAt: Date | null }[] }> {
  const { db } = stack;
  await until(
    async () => (await countRows(db, "webhook_deliveries", { taskId: taskIds, status: ["delivered", "failed"] })) === taskIds.length,
    120_000,
    "healthy webhooks settled",
  );
  const tasks = (await findRows(db, "tasks", { id: taskIds })).map(({ id, finishedAt }) => ({ id, finishedAt }));
  const latencies = tasks
    .flatMap(
      (task) =>
        receiver.posts
          .get(task.id)
          ?.slice(0, 1)
          .map((post) => post.at - task.finishedAt!.getTime()) ?? [],
    )
    .sort((a, b) => a - b);
  return { latencies, tasks };
}
