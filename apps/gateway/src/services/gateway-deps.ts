import type { Queue } from "bullmq";
import type { RedisClient as Redis } from "@gen/queues";
import type { Catalog } from "@gen/catalog";
import type { Config } from "@gen/config";
import type { Database, KeyRevocationListener } from "@gen/db";
import type { Logger } from "@gen/logger";
import type { Metrics } from "@gen/metrics";
import type { GenerationJobData, MaintenanceJobData, WebhookJobData } from "@gen/queues";
import type { BadKeyThrottle } from "./bad-key-throttle.ts";
import type { FinishedTaskCache } from "./finished-task-cache.ts";
import type { KeyCache } from "./key-cache.ts";
import type { RateLimiter } from "@gen/rate-limit";
import type { UrlTargetGuard } from "@gen/webhook-url";
import type { WebhookSender } from "@gen/webhook-sender";

/** Everything a request handler may touch, built once in main.ts (or by a test) and passed down. */
export interface GatewayDeps {
  config: Config;
  db: Database;
  redis: Redis;
  /** The rate limiter's own connection, auto-pipelined (create-redis.ts `limiter`). */
  limiterRedis: Redis;
  generationQueue: Queue<GenerationJobData>;
  webhookQueue: Queue<WebhookJobData>;
  /** The workers' periodic jobs, watched only (console). */
  maintenanceQueue: Queue<MaintenanceJobData>;
  catalog: Catalog;
  /** Refuses URL parameters (image_url) that point at internal addresses (INPUT_URL_ALLOWED_CIDRS). */
  urlGuard: UrlTargetGuard;
  logger: Logger;
  rateLimiter: RateLimiter;
  badKeyThrottle: BadKeyThrottle;
  /** API key → user in this process, on while `keyRevocations` listens (key-cache.ts). */
  keyCache: KeyCache;
  /** This process's LISTEN connection for revoked keys (watch-key-revocations.ts). */
  keyRevocations: KeyRevocationListener;
  /** Poll answers that can never change again (finished-task-cache.ts). */
  finishedTasks: FinishedTaskCache;
  metrics: Metrics;
  /** The delivery's sender with the deployment's settings, for the console's test webhooks. */
  webhookSender: WebhookSender;
}
