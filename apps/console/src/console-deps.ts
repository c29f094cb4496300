import type { Queue } from "bullmq";
import type { RedisClient as Redis } from "@gen/queues";
import type { Config } from "@gen/config";
import { createDatabase, type Database } from "@gen/db";
import type { Logger } from "@gen/logger";
import { QUEUE_NAMES, createQueue, createRedis, type GenerationJobData, type MaintenanceJobData, type WebhookJobData } from "@gen/queues";
import { queueTelemetry } from "@gen/tracing";
import { RateLimiter } from "@gen/rate-limit";
import { createWebhookSender, type WebhookSender } from "@gen/webhook-sender";

/**
 * What the console touches. The gateway passes its own (a GatewayDeps fits); `pnpm start:console`
 * builds them with buildConsoleDeps, from the same packages the gateway uses.
 */
export interface ConsoleDeps {
  config: Config;
  db: Database;
  /** A `request` connection from @gen/queues' createRedis: sessions, the sign-in guard, the limiter. */
  redis: Redis;
  logger: Logger;
  rateLimiter: RateLimiter;
  generationQueue: Queue<GenerationJobData>;
  webhookQueue: Queue<WebhookJobData>;
  /** The workers' periodic jobs (reconcilers, purge), watched only. */
  maintenanceQueue: Queue<MaintenanceJobData>;
  /** The delivery's sender with the deployment's settings, for the console's test webhooks. */
  webhookSender: WebhookSender;
}

export function buildConsoleDeps(config: Config, logger: Logger): ConsoleDeps {
  const redis = createRedis(config.redis, "request");
  // A redelivery or a retry from the dashboard goes on in the worker under the console request's trace.
  const telemetry = queueTelemetry();
  return {
    config,
    logger,
    db: createDatabase(config.databaseUrl, { max: config.databasePoolSize }),
    redis,
    rateLimiter: new RateLimiter(redis, config.queuePrefix),
    generationQueue: createQueue<GenerationJobData>(QUEUE_NAMES.generation, redis, config.queuePrefix, telemetry),
    webhookQueue: createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, config.queuePrefix, telemetry),
    maintenanceQueue: createQueue<MaintenanceJobData>(QUEUE_NAMES.maintenance, redis, config.queuePrefix),
    webhookSender: createWebhookSender({ timeoutMs: config.webhookTimeoutMs, allowedCidrs: config.webhookAllowedCidrs }),
  };
}

export async function closeConsoleDeps(deps: ConsoleDeps): Promise<void> {
  const queues = Promise.all([deps.generationQueue.close(), deps.webhookQueue.close(), deps.maintenanceQueue.close()]).catch(() => {});
  await Promise.race([queues, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
  deps.webhookSender.close();
  deps.redis.disconnect();
  await deps.db.$disconnect();
}
