import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { METRIC_NAMES } from "./metric-names.ts";
import { collectQueueDepths, type CountableQueue } from "./queue-depth.ts";

export interface MetricsOptions {
  /** Queues whose depths `queue_jobs` reports, read from Redis on every scrape. */
  queues?: readonly CountableQueue[];
  /** How long one scrape waits for a queue's counts. */
  queueTimeoutMs?: number;
  /** process_* and nodejs_* metrics of prom-client. On unless a test turns them off. */
  defaultMetrics?: boolean;
}

/** One process's registry and every metric in it. Record through the record* functions. */
export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<"method" | "route" | "status">;
  readonly httpRequestDuration: Histogram<"method" | "route" | "status">;
  readonly tasksFinished: Counter<"status" | "code">;
  readonly generationDuration: Histogram<"endpoint">;
  readonly webhookAttempts: Counter<"outcome">;
  readonly webhookDispatch: Histogram;
  readonly webhookCapFull: Counter<"scope">;
  readonly webhookDelayed: Counter<"reason">;
  readonly queueJobs: Gauge<"queue" | "state">;
  readonly queueCollectErrors: Counter<"queue">;
}

const DEFAULT_QUEUE_TIMEOUT_MS = 1000;
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// Generation runs from a fraction of a second (text models) to GENERATION_TIMEOUT_MS (600 s).
const GENERATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
// Attempt 1 lands in the first buckets; retries land near 40 s and 300 s (WEBHOOK_* defaults).
const DISPATCH_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 45, 60, 120, 300, 330, 600];

/**
 * A fresh registry per call (never prom-client's global one), so that several gateways in one
 * test process, or a gateway and a worker, never share counters.
 */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const queues = options.queues ?? [];
  const queueTimeoutMs = options.queueTimeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS;

  // The registry renders metrics concurrently: both queue metrics wait for the same reading, so
  // an error counted in this scrape also shows in it.
  let reading: Promise<void> | undefined;
  const readQueues = (): Promise<void> =>
    (reading ??= collectQueueDepths(queueJobs, queueCollectErrors, queues, queueTimeoutMs).finally(() => {
      reading = undefined;
    }));
  const queueCollectErrors: Counter<"queue"> = new Counter({
    name: METRIC_NAMES.queueCollectErrors,
    help: "Scrapes that could not read a queue's job counts in time.",
    labelNames: ["queue"] as const,
    registers,
    collect: readQueues,
  });
  const queueJobs: Gauge<"queue" | "state"> = new Gauge({
    name: METRIC_NAMES.queueJobs,
    help: "Jobs in a BullMQ queue by state, read from Redis at scrape time.",
    labelNames: ["queue", "state"] as const,
    registers,
    // Every gateway process of a cluster reads the same queues: summed, the depths would be N times too high.
    aggregator: "max",
    collect: readQueues,
  });

  return {
    registry,
    httpRequests: new Counter({
      name: METRIC_NAMES.httpRequests,
      help: "HTTP requests answered, by method, route pattern and status.",
      labelNames: ["method", "route", "status"] as const,
      registers,
    }),
    httpRequestDuration: new Histogram({
      name: METRIC_NAMES.httpRequestDuration,
      help: "Time from receiving an HTTP request to finishing its response, in seconds.",
      labelNames: ["method", "route", "status"] as const,
      buckets: HTTP_BUCKETS,
      registers,
    }),
    tasksFinished: new Counter({
      name: METRIC_NAMES.tasksFinished,
      help: "Tasks settled by this process, by final status and error code (none when completed).",
      labelNames: ["status", "code"] as const,
      registers,
    }),
    generationDuration: new Histogram({
      name: METRIC_NAMES.generationDuration,
      help: "Time from a task's start to its settlement, by endpoint, in seconds.",
      labelNames: ["endpoint"] as const,
      buckets: GENERATION_BUCKETS,
      registers,
    }),
    webhookAttempts: new Counter({
      name: METRIC_NAMES.webhookAttempts,
      help: "Webhook delivery attempts recorded, by outcome: delivered or the attempt's last_error.",
      labelNames: ["outcome"] as const,
      registers,
    }),
    webhookDispatch: new Histogram({
      name: METRIC_NAMES.webhookDispatch,
      help: "Time from a task reaching its terminal state to the webhook receiver answering an attempt, in seconds.",
      buckets: DISPATCH_BUCKETS,
      registers,
    }),
    webhookCapFull: new Counter({
      name: METRIC_NAMES.webhookCapFull,
      help: "Webhook attempts that found a cap full (scope host or customer) and were delayed.",
      labelNames: ["scope"] as const,
      registers,
    }),
    webhookDelayed: new Counter({
      name: METRIC_NAMES.webhookDelayed,
      help: "Webhook attempt jobs moved back to delayed, by reason: cap (a cap was full) or early (ahead of its due time).",
      labelNames: ["reason"] as const,
      registers,
    }),
    queueJobs,
    queueCollectErrors,
  };
}
