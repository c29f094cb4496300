import { Worker, type Queue } from "bullmq";
import type { RedisClient as Redis } from "@gen/queues";
import type { Config } from "@gen/config";
import type { Database } from "@gen/db";
import type { Logger } from "@gen/logger";
import type { Metrics } from "@gen/metrics";
import { QUEUE_NAMES, createQueue, type WebhookJobData } from "@gen/queues";
import { queueTelemetry } from "@gen/tracing";
import type { HandOffFirstAttempt, PrepareFirstAttempt } from "@gen/webhook-delivery";
import { createWebhookSender, type WebhookSender } from "@gen/webhook-sender";
import type { DeliveryDeps } from "./delivery-deps.ts";
import { createDeliveryHostSlots } from "./delivery-host-slots.ts";
import { createInlineAttempts } from "./inline-attempt.ts";
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
  /** Consumer of the slow lane: attempts for receivers that keep timing out. */
  slowWorker: Worker<WebhookJobData>;
  /** Producer handle of the webhook queue (the hand-off and the reconciler can use it). */
  webhookQueue: Queue<WebhookJobData>;
  /** Producer handle of the slow lane (the reconciler looks there before re-adding a job). */
  slowQueue: Queue<WebhookJobData>;
  /**
   * Attempt 1 of a task that just became terminal, routed by its receiver's tickets: with a ticket it
   * runs in this process at once (inline-attempt.ts), otherwise it is queued (parked, slow lane).
   */
  handOff: HandOffFirstAttempt;
  /** Its prepare step: the ticket taken alongside the terminal statement when one is free (the generation worker's finish). */
  prepareHandOff: PrepareFirstAttempt;
  /** Waits for running attempts (inline ones too), then closes the worker, the queue handle and an owned sender. */
  close(): Promise<void>;
}

/**
 * The longest a delivery job may go without its lock being renewed before BullMQ counts it as
 * stalled. A live worker renews every LOCK_MS / 4 (BullMQ's timer, whatever the attempt is doing),
 * so the lock only lapses if the process is dead or its event loop or Redis link is stuck for about
 * three renewals (~3.75 s); the lock therefore need not outlast the attempt (2 s render + the
 * webhook timeout). Detection after a death is then at most ~LOCK_MS (lapse) + 2 stalled checks
 * (LOCK_MS / 2 apart), about 10 s, whatever WEBHOOK_TIMEOUT_MS is. Even when a lock is lost by a
 * live worker, nothing is sent twice for one attempt (the claim is conditional and the re-run
 * records `attempt_lost`); what could repeat is the POST of the next attempt, which is why the lock
 * is not shorter. JOB_LOCK_MS below 5 s (test timings) shortens it further.
 */
const DELIVERY_LOCK_MS = 5_000;

/** The delivery lock's duration with this configuration (an inline attempt's lease lasts as long unrenewed). */
export const deliveryLockMs = (config: Pick<Config, "jobLockMs">): number => Math.min(config.jobLockMs, DELIVERY_LOCK_MS);

/**
 * Consumes the webhook queues (the main lane and the slow lane): one job per delivery attempt. A
 * worker killed mid-attempt leaves its job locked; once the lock lapses BullMQ hands the job to
 * another worker, which records `attempt_lost` instead of sending again.
 */
export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { config, db, redis, logger } = options;
  const ownSender = options.sender === undefined;
  const sender = options.sender ?? createWebhookSender({ timeoutMs: config.webhookTimeoutMs, allowedCidrs: config.webhookAllowedCidrs });
  const telemetry = queueTelemetry();
  const webhookQueue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, config.queuePrefix, telemetry);
  const slowQueue = createQueue<WebhookJobData>(QUEUE_NAMES.webhookSlow, redis, config.queuePrefix, telemetry);
  const hostSlots = createDeliveryHostSlots(redis, config);
  const deps: DeliveryDeps = {
    config,
    db,
    logger,
    webhookQueue,
    sender,
    render: options.render ?? renderTaskBody,
    now: options.now ?? (() => new Date()),
    metrics: options.metrics,
    hostSlots,
    lane: "main",
    slowQueue,
  };
  const lockDuration = deliveryLockMs(config);
  const workerOptions = {
    connection: redis,
    prefix: config.queuePrefix,
    lockDuration,
    lockRenewTime: lockDuration / 4,
    stalledInterval: lockDuration / 2,
    // A job that stalls more often than this is failed by BullMQ; the reconciler then records its attempt as lost.
    maxStalledCount: 2,
    telemetry,
  };
  const worker = new Worker<WebhookJobData>(QUEUE_NAMES.webhook, (job, token) => processDelivery(deps, job, token), {
    ...workerOptions,
    concurrency: config.deliveryConcurrency,
  });
  // The slow lane's slots are few: its receivers hold each one for a whole timeout.
  const slowDeps: DeliveryDeps = { ...deps, lane: "slow" };
  const slowWorker = new Worker<WebhookJobData>(QUEUE_NAMES.webhookSlow, (job, token) => processDelivery(slowDeps, job, token), {
    ...workerOptions,
    concurrency: Math.max(1, Math.floor(config.deliveryConcurrency / 4)),
  });
  // Inline first attempts: at most as many at once as the worker runs jobs; their lease lasts as long as a lock.
  const inline = createInlineAttempts(deps, { bound: config.deliveryConcurrency, leaseMs: lockDuration, redis });
  for (const each of [worker, slowWorker]) {
    each.on("failed", (job, error) =>
      logger.warn("webhook job failed; the reconciler picks the delivery up again", { task_id: job?.data.taskId, attempt: job?.data.attempt, err: error }),
    );
    each.on("error", (error) => logger.error("webhook worker error", { err: error }));
  }

  return {
    worker,
    slowWorker,
    webhookQueue,
    slowQueue,
    handOff: inline.handOff,
    prepareHandOff: inline.prepare,
    async close() {
      await Promise.all([inline.close(), worker.close(), slowWorker.close()]);
      if (ownSender) sender.close();
      await Promise.all([webhookQueue.close(), slowQueue.close()]);
    },
  };
}
