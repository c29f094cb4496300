import { loadCatalog } from "@gen/catalog";
import type { Config } from "@gen/config";
import { createDatabase } from "@gen/db";
import type { Logger } from "@gen/logger";
import { createMetrics, packageVersion } from "@gen/metrics";
import { QUEUE_NAMES, createQueue, createRedis, type GenerationJobData, type MaintenanceJobData, type WebhookJobData } from "@gen/queues";
import type { GatewayDeps } from "./gateway-deps.ts";
import { BadKeyThrottle } from "./bad-key-throttle.ts";
import { FinishedTaskCache } from "./finished-task-cache.ts";
import { KeyCache } from "./key-cache.ts";
import { RateLimiter } from "@gen/rate-limit";
import { watchKeyRevocations } from "./watch-key-revocations.ts";
import { createUrlTargetGuard } from "@gen/webhook-url";
import { queueTelemetry } from "@gen/tracing";
import { createWebhookSender } from "@gen/webhook-sender";

export function buildDeps(config: Config, logger: Logger): GatewayDeps {
  // First, before any connection: a malformed INPUT_URL_ALLOWED_CIDRS stops the gateway here.
  const urlGuard = createUrlTargetGuard({ allowedCidrs: config.inputUrlAllowedCidrs });
  const redis = createRedis(config.redis, "request");
  // Submissions' jobs are added in batches, each job carrying its own request's trace context
  // (enqueueGenerationJobs): the generation queue's own telemetry would put the batch's add in one
  // request's trace. A cancel's webhook job and the console's redeliveries are added one by one, traced.
  const generationQueue = createQueue<GenerationJobData>(QUEUE_NAMES.generation, redis, config.queuePrefix);
  const webhookQueue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, config.queuePrefix, queueTelemetry());
  // Watched only too (console): the workers' periodic jobs (reconcilers, purge) and their schedulers.
  const maintenanceQueue = createQueue<MaintenanceJobData>(QUEUE_NAMES.maintenance, redis, config.queuePrefix);
  // The limiter's calls (one per request) on a connection of their own that pipelines them
  // (create-redis.ts `limiter`); BullMQ's commands stay on `redis`.
  const limiterRedis = createRedis(config.redis, "limiter");
  const rateLimiter = new RateLimiter(limiterRedis, config.queuePrefix, { gather: true });
  const keyCache = new KeyCache();
  return {
    config,
    logger,
    db: createDatabase(config.databaseUrl, { max: config.databasePoolSize }),
    redis,
    limiterRedis,
    generationQueue,
    webhookQueue,
    maintenanceQueue,
    catalog: loadCatalog(config.modelCatalogPath),
    urlGuard,
    rateLimiter,
    badKeyThrottle: new BadKeyThrottle(rateLimiter, config.badKeyRate),
    keyCache,
    keyRevocations: watchKeyRevocations(config.databaseUrl, keyCache, logger),
    finishedTasks: new FinishedTaskCache(),
    metrics: createMetrics({
      queues: [generationQueue, webhookQueue, maintenanceQueue],
      prefix: config.metricsPrefix,
      build: { version: packageVersion(new URL("../../package.json", import.meta.url)), commit: config.buildCommit },
    }),
    // Opens no connection until the console sends a test webhook; a malformed WEBHOOK_ALLOWED_CIDRS throws here.
    webhookSender: createWebhookSender({ timeoutMs: config.webhookTimeoutMs, allowedCidrs: config.webhookAllowedCidrs }),
  };
}

export async function closeDeps(deps: GatewayDeps): Promise<void> {
  const queues = Promise.all([deps.generationQueue.close(), deps.webhookQueue.close(), deps.maintenanceQueue.close()]).catch(() => {});
  await Promise.race([queues, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
  deps.webhookSender.close();
  deps.redis.disconnect();
  deps.limiterRedis.disconnect();
  await Promise.all([deps.keyRevocations.close(), deps.db.$disconnect()]);
}
