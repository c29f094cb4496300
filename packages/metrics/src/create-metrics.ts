import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { METRIC_DEFINITIONS, type MetricKey } from "./metric-names.ts";
import { collectQueueDepths, type CountableQueue } from "./queue-depth.ts";

export interface MetricsOptions {
  /** Queues whose depths `queue_jobs` reports, read from Redis on every scrape. */
  queues?: readonly CountableQueue[];
  /** How long one scrape waits for a queue's counts. */
  queueTimeoutMs?: number;
  /** process_* and nodejs_* metrics of prom-client. On unless a test turns them off. */
  defaultMetrics?: boolean;
  /** Put before every name of ours (METRICS_PREFIX); prom-client's process_* and nodejs_* keep their standard names. */
  prefix?: string;
  /** `build_info`'s labels: the package version and, when known, the source commit. */
  build?: { version: string; commit?: string | undefined };
}

/** One process's registry and every metric in it. Record through the record* functions. */
export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<"method" | "route" | "status">;
  readonly httpRequestDuration: Histogram<"method" | "route" | "status">;
  readonly buildInfo: Gauge<"version" | "commit" | "node_version">;
  readonly tasksFinished: Counter<"status" | "code" | "endpoint" | "model" | "provider">;
  readonly generationDuration: Histogram<"endpoint" | "model" | "provider" | "status">;
  readonly upstreamRequestDuration: Histogram<"provider" | "operation" | "status">;
  readonly reconcilerRepairs: Counter<"kind">;
  readonly webhookAttempts: Counter<"outcome">;
  readonly webhookDispatch: Histogram;
  readonly webhookCapFull: Counter<"scope">;
  readonly webhookDelayed: Counter<"reason">;
  readonly queueJobs: Gauge<"queue" | "state">;
  readonly queueCollectErrors: Counter<"queue">;
}

const DEFAULT_QUEUE_TIMEOUT_MS = 1000;
// prom-client samples the event loop's delay (nodejs_eventloop_lag_*) on a timer, every 10 ms by
// default: 100 wake-ups a second were most of an idle process's CPU (4 of 6.7 ms per second of a
// worker, 3.3 of 4.3 of a gateway: bench/README.md "Idle processes"). Every 100 ms still gives 150
// samples per 15-s scrape, and no block of the loop longer than that goes unseen.
const EVENT_LOOP_SAMPLE_MS = 100;
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// Generation runs from a fraction of a second (text models) to GENERATION_TIMEOUT_MS (600 s).
const GENERATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
// Attempt 1 lands in the first buckets; retries land near 40 s and 300 s (WEBHOOK_* defaults).
const DISPATCH_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 45, 60, 120, 300, 330, 600];
// A provider call is bounded by UPSTREAM_TIMEOUT_MS (default 30 s).
const UPSTREAM_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** A metric's name (with the prefix), help and label names, from its one definition. */
function definition<K extends MetricKey>(key: K, prefix: string) {
  const { name, help, labels } = METRIC_DEFINITIONS[key];
  return { name: `${prefix}${name}`, help, labelNames: labels };
}

/**
 * A fresh registry per call (never prom-client's global one), so that several gateways in one
 * test process, or a gateway and a worker, never share counters.
 */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const prefix = options.prefix ?? "";
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
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
    ...definition("queueCollectErrors", prefix),
    registers,
    collect: readQueues,
  });
  const queueJobs: Gauge<"queue" | "state"> = new Gauge({
    ...definition("queueJobs", prefix),
    registers,
    // Every gateway process of a cluster reads the same queues: summed, the depths would be N times too high.
    aggregator: "max",
    collect: readQueues,
  });

  // A cluster's children run the same build: one series, not their sum.
  const buildInfo = new Gauge({ ...definition("buildInfo", prefix), registers, aggregator: "max" });
  buildInfo.set({ version: options.build?.version ?? "unknown", commit: options.build?.commit ?? "unknown", node_version: process.version }, 1);

  return {
    registry,
    buildInfo,
    httpRequests: new Counter({
      ...definition("httpRequests", prefix),
      registers,
    }),
    httpRequestDuration: new Histogram({
      ...definition("httpRequestDuration", prefix),
      buckets: HTTP_BUCKETS,
      registers,
    }),
    tasksFinished: new Counter({
      ...definition("tasksFinished", prefix),
      registers,
    }),
    generationDuration: new Histogram({
      ...definition("generationDuration", prefix),
      buckets: GENERATION_BUCKETS,
      registers,
    }),
    upstreamRequestDuration: new Histogram({
      ...definition("upstreamRequestDuration", prefix),
      buckets: UPSTREAM_BUCKETS,
      registers,
    }),
    reconcilerRepairs: new Counter({ ...definition("reconcilerRepairs", prefix), registers }),
    webhookAttempts: new Counter({
      ...definition("webhookAttempts", prefix),
      registers,
    }),
    webhookDispatch: new Histogram({
      ...definition("webhookDispatch", prefix),
      buckets: DISPATCH_BUCKETS,
      registers,
    }),
    webhookCapFull: new Counter({ ...definition("webhookCapFull", prefix), registers }),
    webhookDelayed: new Counter({ ...definition("webhookDelayed", prefix), registers }),
    queueJobs,
    queueCollectErrors,
  };
}
