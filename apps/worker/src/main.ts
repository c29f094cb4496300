import { loadCatalog } from "@gen/catalog";
import { loadConfig } from "@gen/config";
import { checkDatabase, createDatabase, purgeExpiredIdempotencyKeys } from "@gen/db";
import { createLogger } from "@gen/logger";
import { REPAIR_KINDS, createMetrics, packageVersion, recordReconcilerRepairs, startMetricsServer } from "@gen/metrics";
import {
  MAINTENANCE_JOBS,
  QUEUE_NAMES,
  checkRedis,
  createQueue,
  createRedis,
  type GenerationJobData,
  type MaintenanceJobData,
  type WebhookJobData,
} from "@gen/queues";
import { createDownloadGuard, createStorage } from "@gen/storage";
import { queueTelemetry, startTracing, traceLogFields } from "@gen/tracing";
import { createDeliveryWorker, reconcileDeliveries } from "./delivery/index.ts";
import { createGenerationWorker } from "./generation/create-generation-worker.ts";
import { createProviderRegistry } from "./generation/provider-registry.ts";
import { timedProviders } from "./generation/timed-providers.ts";
import { createMaintenanceWorker } from "./maintenance/create-maintenance-worker.ts";
import { purgeFinishedTasks } from "./maintenance/purge-finished-tasks.ts";
import { removeExpiredMedia } from "./maintenance/remove-expired-media.ts";
import { reconcileTasks } from "./reconcile-tasks.ts";

const SHUTDOWN_GRACE_MS = 15_000;

async function main(): Promise<void> {
  const config = loadConfig();
  const tracing = startTracing(config.tracing, "worker");
  const logger = createLogger("worker", config.logLevel, {}, config.tracing && traceLogFields);
  const catalog = loadCatalog(config.modelCatalogPath);
  // Before any connection: a catalog this worker cannot serve (a provider without its credential) stops it with one line.
  const providers = createProviderRegistry(catalog, config);
  const db = createDatabase(config.databaseUrl, { max: config.databasePoolSize });
  const redis = createRedis(config.redis, "blocking");
  await checkDatabase(db, config.databaseUrl);
  await checkRedis(redis, config.redis);
  // The maintenance queue stays untraced: its periodic runs would each start a trace of their own.
  const telemetry = queueTelemetry();
  const generationQueue = createQueue<GenerationJobData>(QUEUE_NAMES.generation, redis, config.queuePrefix, telemetry);
  const storage = createStorage(config);
  const downloadGuard = createDownloadGuard({ allowedCidrs: config.upstreamAllowedCidrs });
  const webhookQueue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, config.queuePrefix, telemetry);
  const maintenanceQueue = createQueue<MaintenanceJobData>(QUEUE_NAMES.maintenance, redis, config.queuePrefix);
  const metrics = createMetrics({
    queues: [generationQueue, webhookQueue, maintenanceQueue],
    prefix: config.metricsPrefix,
    build: { version: packageVersion(new URL("../package.json", import.meta.url)), commit: config.buildCommit },
  });
  const delivery = createDeliveryWorker({ config, db, redis, logger, metrics });
  const generation = createGenerationWorker(
    {
      config,
      db,
      catalog,
      providers: timedProviders(providers, metrics),
      storage,
      downloadGuard,
      webhookQueue,
      generationQueue,
      logger,
      metrics,
    },
    redis,
  );
  const metricsServer = await startMetricsServer(metrics, config.workerMetricsPort, config.http, logger, "worker");

  const every = config.reconcileIntervalMs;
  const { taskDays, mediaDays, archive } = config.retention;
  const maintenance = await createMaintenanceWorker({
    queue: maintenanceQueue,
    connection: redis,
    prefix: config.queuePrefix,
    intervals: {
      [MAINTENANCE_JOBS.reconcileTasks]: every,
      [MAINTENANCE_JOBS.reconcileDeliveries]: every,
      [MAINTENANCE_JOBS.purgeIdempotencyKeys]: every,
      ...(taskDays === undefined ? {} : { [MAINTENANCE_JOBS.purgeFinishedTasks]: every }),
      ...(mediaDays === undefined ? {} : { [MAINTENANCE_JOBS.removeExpiredMedia]: every }),
    },
    logger,
    runs: {
      [MAINTENANCE_JOBS.reconcileTasks]: async () => {
        const count = await reconcileTasks(db, generationQueue, every * 2);
        recordReconcilerRepairs(metrics, REPAIR_KINDS.taskRequeued, count);
        if (count > 0) logger.warn("reconciler re-enqueued tasks", { count });
      },
      [MAINTENANCE_JOBS.reconcileDeliveries]: async () => {
        const repaired = await reconcileDeliveries({ config, db, webhookQueue, logger, metrics });
        recordReconcilerRepairs(metrics, REPAIR_KINDS.attemptLost, repaired.lost);
        recordReconcilerRepairs(metrics, REPAIR_KINDS.deliveryRequeued, repaired.enqueued);
      },
      [MAINTENANCE_JOBS.purgeIdempotencyKeys]: async () => {
        const purged = await purgeExpiredIdempotencyKeys(db);
        if (purged > 0) logger.info("purged expired idempotency keys", { count: purged });
      },
      ...(taskDays === undefined
        ? {}
        : {
            [MAINTENANCE_JOBS.purgeFinishedTasks]: async () => {
              const purged = await purgeFinishedTasks({ db, storage, retention: { taskDays, archive } });
              if (purged.tasks > 0) {
                logger.info("removed tasks past their retention", {
                  count: purged.tasks,
                  ledger_entries: purged.ledgerEntries,
                  carried_forward: purged.carried,
                  archive_files: purged.archiveKeys.length,
                });
              }
            },
          }),
      ...(mediaDays === undefined
        ? {}
        : {
            [MAINTENANCE_JOBS.removeExpiredMedia]: async () => {
              const removed = await removeExpiredMedia({ db, storage, retention: { mediaDays } });
              if (removed > 0) logger.info("removed media past their retention", { tasks: removed });
            },
          }),
    },
  });
  logger.info("worker started", { queue_prefix: config.queuePrefix, concurrency: config.workerConcurrency });
  process.send?.({ ready: "worker" });

  // SIGTERM: stop taking jobs and let running ones finish; past the grace period, close without
  // waiting. Their locks then expire and another worker resumes them from `upstream_id`.
  const shutdown = async (signal: string) => {
    logger.info("worker shutting down", { signal });
    metricsServer?.close();
    const force = setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
    await Promise.all([generation.close(), delivery.close(), maintenance.close()]).catch(() => {});
    downloadGuard.close();
    await Promise.all([generationQueue.close(), webhookQueue.close(), maintenanceQueue.close()]).catch(() => {});
    redis.disconnect();
    await db.$disconnect();
    await tracing.shutdown();
    clearTimeout(force);
    process.exit(0);
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`worker: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
