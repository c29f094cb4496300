import type { Queue } from "bullmq";
import type { Catalog } from "@gen/catalog";
import type { Config } from "@gen/config";
import type { Database } from "@gen/db";
import type { Logger } from "@gen/logger";
import type { Metrics } from "@gen/metrics";
import type { GenerationJobData, RedisClient, UpstreamSlots, WebhookJobData } from "@gen/queues";
import type { DownloadGuard, Storage } from "@gen/storage";
import type { ProviderRegistry } from "./provider-registry.ts";

export interface GenerationDeps {
  config: Config;
  db: Database;
  catalog: Catalog;
  providers: ProviderRegistry;
  storage: Storage;
  /** The SSRF guard every upstream file download goes through (UPSTREAM_ALLOWED_CIDRS). */
  downloadGuard: DownloadGuard;
  webhookQueue: Queue<WebhookJobData>;
  /** The generation queue itself: a task wakes another's parked job through it (a freed slot, a callback). Absent: nobody is woken (tests). */
  generationQueue?: Queue<GenerationJobData>;
  /** Upstream callbacks' marks live here (upstream-callback-signal.ts). Absent: none are read (tests). */
  redis?: RedisClient;
  /** Fleet-wide slots of capped routes (catalog `maxConcurrency`). Absent: caps are not enforced (tests without Redis). */
  upstreamSlots?: UpstreamSlots;
  logger: Logger;
  /** Optional so that tests can build deps without a registry. */
  metrics?: Metrics;
}
