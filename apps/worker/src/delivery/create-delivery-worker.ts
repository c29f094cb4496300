import { Worker, type Queue } from "bullmq";
import type { RedisClient as Redis } from "@gen/queues";
import type { Config } from "@gen/config";
import type { Database } from "@gen/db";
import type { Logger } from "@gen/logger";
import type { Metrics } from "@gen/metrics";
import { QUEUE_NAMES, createQueue, type WebhookJobData } from "@gen/queues";
import { queueTelemetry } from "@gen/tracing";
import { createWebhookSender, type WebhookSender } from "@gen/webhook-sender";
import { createWorkerCaps } from "./delivery-cap.ts";
import type { DeliveryDeps } from "./delivery-deps.ts";
import { processDelivery } from "./process-delivery.ts";
import { renderTaskBody, type RenderBody } from "./render-body.ts";

export interface DeliveryWorkerOptions {
  config: Config;
  db: Database;
  /** A `blocking` connection (createRedis(url, "blocking")); owned by the caller. */
  redis: Redis;
  logger: Logger;
  /** Defaults to one sender built from the config, closed by `close()`. An injected one is the caller's. */
  sender?: WebhookSender;
  /** Tests only: replaces rendering the task. */
  render?: RenderBody;
  now?: () => Date;
  /** The worker's registry: attempts are counted in `webhook_attempts_total` / `webhook_dispatch_seconds`. */
  metrics?: Metrics;
}

export interface DeliveryWorker {
  worker: Worker<WebhookJobData>;
  /** Producer handle of the webhook queue (the reconciler can use it). */
  webhookQueue: Queue<WebhookJobData>;
  /** Waits for running attempts, then closes the worker, the queue handle and an owned sender. */
  close(): Promise<void>;
}

/**
 * The longest a delivery job may go without its lock being renewed before BullMQ counts it as
 * stalled. A live worker renews every LOCK_MS / 4 (BullMQ's timer, whatever the attempt is doing),
 * so the lock only lapses if the process is dead or its event loop or Redis link is stuck for about
 * three renewals (~3.75 s); the lock therefore need not outlast the attempt (2 s render + the
 * webhook timeout). Detection after a death is then at most ~LOCK_MS (lapse) + 2 stalled checks
 * (LOCK_MS / 4 apart), about 7.5 s, whatever WEBHOOK_TIMEOUT_MS is: within the 15 s promised even
 * with a replacement worker's start-up and a loaded machine's delays on top. Even
 * when a lock is lost by a live worker, nothing is sent twice for one attempt (the claim is
 * conditional and the re-run records `attempt_lost`); what could repeat is the POST of the next
 * attempt, which is why the lock is not shorter. JOB_LOCK_MS below 5 s (test timings) shortens it.
 */
const DELIVERY_LOCK_MS = 5_000;

/** The delivery lock's duration with this configuration. */
const deliveryLockMs = (config: Pick<Config, "jobLockMs">): number => Math.min(config.jobLockMs, DELIVERY_LOCK_MS);

/**
 * Consumes the webhook queue: one job per delivery attempt, every attempt the same steps
 * (process-delivery.ts). A worker killed mid-attempt leaves its job locked; once the lock lapses
 * BullMQ's stalled-job check hands the job to another worker, which records `attempt_lost` instead
 * of sending again.
 */
export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { config, db, redis, logger } = options;
  const ownSender = options.sender === undefined;
  const sender = options.sender ?? createWebhookSender({ timeoutMs: config.webhookTimeoutMs, allowedCidrs: config.webhookAllowedCidrs });
  const telemetry = queueTelemetry();
  const webhookQueue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, config.queuePrefix, telemetry);
  const deps: DeliveryDeps = {
    config,
    db,
    logger,
    webhookQueue,
    sender,
    render: options.render ?? renderTaskBody,
    now: options.now ?? (() => new Date()),
    metrics: options.metrics,
    caps: createWorkerCaps(redis, config),
  };
  const lockDuration = deliveryLockMs(config);
  const worker = new Worker<WebhookJobData>(QUEUE_NAMES.webhook, (job, token) => processDelivery(deps, job, token), {
    connection: redis,
    prefix: config.queuePrefix,
    concurrency: config.deliveryConcurrency,
    lockDuration,
    lockRenewTime: lockDuration / 4,
    stalledInterval: lockDuration / 4,
    // A job that stalls more often than this is failed by BullMQ; the reconciler then records its attempt as lost.
    maxStalledCount: 2,
    telemetry,
  });
  worker.on("failed", (job, error) =>
    logger.warn("webhook job failed; the reconciler picks the delivery up again", { task_id: job?.data.taskId, attempt: job?.data.attempt, err: error }),
  );
  worker.on("error", (error) => logger.error("webhook worker error", { err: error }));

  return {
    worker,
    webhookQueue,
    async close() {
      await worker.close();
      if (ownSender) sender.close();
      await webhookQueue.close();
    },
  };
}
