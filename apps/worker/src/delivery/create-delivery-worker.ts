import { Worker, type Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Config } from "@gen/config";
import type { Database } from "@gen/db";
import type { Logger } from "@gen/logger";
import type { Metrics } from "@gen/metrics";
import { QUEUE_NAMES, createQueue, type WebhookJobData } from "@gen/queues";
import { createWebhookSender, type WebhookSender } from "@gen/webhook-sender";
import type { DeliveryDeps } from "./delivery-deps.ts";
import { processDelivery } from "./process-delivery.ts";
import { taskBodyRenderer, type RenderBody } from "./render-body.ts";

export interface DeliveryWorkerOptions {
  config: Config;
  db: Database;
  /** A `blocking` connection (createRedis(url, "blocking")); owned by the caller. */
  redis: Redis;
  logger: Logger;
  /** Defaults to one sender built from the config, closed by `close()`. An injected one is the caller's. */
  sender?: WebhookSender;
  /** Tests only: replaces reading and rendering the task. */
  render?: RenderBody;
  now?: () => Date;
  /** The worker's registry: attempts are counted in `webhook_attempts_total` / `webhook_dispatch_seconds`. */
  metrics?: Metrics;
}

export interface DeliveryWorker {
  worker: Worker<WebhookJobData>;
  /** Producer handle of the webhook queue (the hand-off and the reconciler can use it). */
  webhookQueue: Queue<WebhookJobData>;
  /** Waits for running attempts, then closes the worker, the queue handle and an owned sender. */
  close(): Promise<void>;
}

/**
 * Consumes the webhook queue: one job per delivery attempt. A worker killed mid-attempt leaves its
 * job locked; once the lock (JOB_LOCK_MS) expires BullMQ hands the job to another worker, which
 * records `attempt_lost` instead of sending again.
 */
export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { config, db, redis, logger } = options;
  const ownSender = options.sender === undefined;
  const sender = options.sender ?? createWebhookSender({ timeoutMs: config.webhookTimeoutMs, allowedCidrs: config.webhookAllowedCidrs });
  const webhookQueue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, config.queuePrefix);
  const deps: DeliveryDeps = {
    config,
    db,
    logger,
    webhookQueue,
    sender,
    render: options.render ?? taskBodyRenderer(db),
    now: options.now ?? (() => new Date()),
    metrics: options.metrics,
  };
  const worker = new Worker<WebhookJobData>(QUEUE_NAMES.webhook, (job, token) => processDelivery(deps, job, token), {
    connection: redis,
    prefix: config.queuePrefix,
    concurrency: config.deliveryConcurrency,
    lockDuration: config.jobLockMs,
    stalledInterval: config.jobLockMs,
    // A job that stalls more often than this is failed by BullMQ; the reconciler then records its attempt as lost.
    maxStalledCount: 2,
  });
  worker.on("failed", (job, error) => logger.warn("webhook job failed; the reconciler picks the delivery up again", { task_id: job?.data.taskId, attempt: job?.data.attempt, err: error }));
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
