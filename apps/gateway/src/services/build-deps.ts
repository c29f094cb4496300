import { loadCatalog } from "@gen/catalog";
import type { Config } from "@gen/config";
import { createDatabase } from "@gen/db";
import type { Logger } from "@gen/logger";
import { QUEUE_NAMES, createQueue, createRedis, type GenerationJobData } from "@gen/queues";
import type { GatewayDeps } from "./gateway-deps.ts";
import { RateLimiter } from "./rate-limiter.ts";

export function buildDeps(config: Config, logger: Logger): GatewayDeps {
  const redis = createRedis(config.redisUrl, "request");
  return {
    config,
    logger,
    db: createDatabase(config.databaseUrl),
    redis,
    generationQueue: createQueue<GenerationJobData>(QUEUE_NAMES.generation, redis, config.queuePrefix),
    catalog: loadCatalog(config.modelCatalogPath),
    rateLimiter: new RateLimiter(redis, config.queuePrefix),
  };
}

export async function closeDeps(deps: GatewayDeps): Promise<void> {
  await Promise.race([deps.generationQueue.close().catch(() => {}), new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
  deps.redis.disconnect();
  await deps.db.$disconnect();
}
