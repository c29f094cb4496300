import { loadConfig } from "@gen/config";
import { checkDatabase, createDatabase } from "@gen/db";
import { createLogger } from "@gen/logger";
import { QUEUE_NAMES, checkRedis, createQueue, createRedis, type GenerationJobData } from "@gen/queues";
import { reconcileTasks } from "./reconcile-tasks.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger("worker", config.logLevel);
  const db = createDatabase(config.databaseUrl);
  const redis = createRedis(config.redisUrl, "blocking");
  await checkDatabase(db, config.databaseUrl);
  await checkRedis(redis, config.redisUrl);
  const generationQueue = createQueue<GenerationJobData>(QUEUE_NAMES.generation, redis, config.queuePrefix);

  const reconcile = async () => {
    try {
      const count = await reconcileTasks(db, generationQueue, config.reconcileIntervalMs * 2);
      if (count > 0) logger.warn("reconciler re-enqueued tasks", { count });
    } catch (error) {
      logger.error("reconcile failed", { err: error });
    }
  };
  const timer = setInterval(reconcile, config.reconcileIntervalMs);
  logger.info("worker started", { queue_prefix: config.queuePrefix });
  process.send?.({ ready: "worker" });

  const shutdown = async (signal: string) => {
    logger.info("worker shutting down", { signal });
    clearInterval(timer);
    await generationQueue.close().catch(() => {});
    redis.disconnect();
    await db.$disconnect();
    process.exit(0);
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`worker: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
