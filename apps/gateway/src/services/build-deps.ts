import { loadCatalog } from "@gen/catalog";
import type { Config } from "@gen/config";
import { createDatabase } from "@gen/db";
import type { Logger } from "@gen/logger";
import { createMetrics } from "@gen/metrics";
import { QUEUE_NAMES, createQueue, createRedis, type GenerationJobData, type MaintenanceJobData, type WebhookJobData } from "@gen/queues";
import type { GatewayDeps } from "./gateway-deps.ts";
import { BadKeyThrottle } from "./bad-key-throttle.ts";
import { FinishedTaskCache } from "./finished-task-cache.ts";
import { KeyCache } from "./key-cache.ts";
import { RateLimiter } from "@gen/rate-limit";
import { watchKeyRevocations } from "./watch-key-revocations.ts";
import { createUrlTargetGuard } from "@gen/webhook-url";

export function buildDeps(config: Config, logger: Logger): GatewayDeps {
  // First, before any connection: a malformed INPUT_URL_ALLOWED_CIDRS stops the gateway here.
  const urlGuard = createUrlTargetGuard({ allowedCidrs: config.inputUrlAllowedCidrs });
  const redis = createRedis(config.redis, "request");
  const generationQueue = createQueue<GenerationJobData>(QUEUE_NAMES.generation, redis, config.queuePrefix);
  const webhookQueue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, config.queuePrefix);
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
    metrics: createMetrics({ queues: [generationQueue, webhookQueue] }),
  };
}

export async function closeDeps(deps: GatewayDeps): Promise<void> {
  const queues = Promise.all([deps.generationQueue.close(), deps.webhookQueue.close(), deps.maintenanceQueue.close()]).catch(() => {});
  await Promise.race([queues, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
  deps.redis.disconnect();
  deps.limiterRedis.disconnect();
  await Promise.all([deps.keyRevocations.close(), deps.db.$disconnect()]);
}
