/**
 * Every metric this service exports, defined once: createMetrics builds the registry from it and
 * docs/metrics.md's table is tested against it. `name` is without the deployment's METRICS_PREFIX.
 */
export const METRIC_DEFINITIONS = {
  buildInfo: {
    name: "build_info",
    type: "gauge",
    labels: ["version", "commit", "node_version"],
    exportedBy: "gateway, worker",
    help: "Always 1; the labels name the running build: package version, source commit (BUILD_COMMIT, `unknown` when unset) and Node.js version.",
  },
  httpRequests: {
    name: "http_requests_total",
    type: "counter",
    labels: ["method", "route", "status"],
    exportedBy: "gateway",
    help: "HTTP requests answered, by method, route pattern and status. `route` is the Express route pattern, never the raw path; anything unmatched is `unmatched`.",
  },
  httpRequestDuration: {
    name: "http_request_duration_seconds",
    type: "histogram",
    labels: ["method", "route", "status"],
    exportedBy: "gateway",
    help: "Time from receiving an HTTP request to finishing its response, in seconds.",
  },
  tasksFinished: {
    name: "tasks_finished_total",
    type: "counter",
    labels: ["status", "code", "endpoint", "model", "provider"],
    exportedBy: "worker, gateway (cancellations)",
    help: "Tasks settled by this process, once per task: final status, error code (`none` when completed), endpoint, catalog model and the provider of the route that ran it (`none` before any submit).",
  },
  generationDuration: {
    name: "generation_duration_seconds",
    type: "histogram",
    labels: ["endpoint", "model", "provider", "status"],
    exportedBy: "worker, gateway (cancellations of started tasks)",
    help: "Time from a task's start to its settlement, in seconds, by endpoint, model, provider and final status.",
  },
  upstreamRequestDuration: {
    name: "upstream_request_duration_seconds",
    type: "histogram",
    labels: ["provider", "operation", "status"],
    exportedBy: "worker",
    help: "One call to a provider (`operation` submit, poll or cancel), in seconds. `status` is `ok` for a usable answer, else the provider's HTTP status, `network` (no answer: refused, reset, timed out) `refused` (a rejection without a status) or `error` (anything else).",
  },
  reconcilerRepairs: {
    name: "reconciler_repairs_total",
    type: "counter",
    labels: ["kind"],
    exportedBy: "worker",
    help: "Repairs made by the reconcilers, by kind: `task_requeued` (an open task without a live job), `attempt_lost` (an attempt whose worker vanished), `delivery_requeued` (a due delivery without a job).",
  },
  webhookAttempts: {
    name: "webhook_attempts_total",
    type: "counter",
    labels: ["outcome"],
    exportedBy: "worker",
    help: "Webhook delivery attempts recorded, by outcome: delivered or the attempt's last_error.",
  },
  webhookDispatch: {
    name: "webhook_dispatch_seconds",
    type: "histogram",
    labels: [],
    exportedBy: "worker",
    help: "Time from a task reaching its terminal state to the webhook receiver answering an attempt, in seconds.",
  },
  webhookCapFull: {
    name: "webhook_cap_full_total",
    type: "counter",
    labels: ["scope"],
    exportedBy: "worker",
    help: "Webhook attempts that found a cap full (`scope` host or customer) and were delayed until their turn.",
  },
  webhookDelayed: {
    name: "webhook_attempts_delayed_total",
    type: "counter",
    labels: ["reason"],
    exportedBy: "worker",
    help: "Webhook attempt jobs moved back to delayed, by reason: `cap` (a cap was full) or `early` (ahead of its due time).",
  },
  queueJobs: {
    name: "queue_jobs",
    type: "gauge",
    labels: ["queue", "state"],
    exportedBy: "gateway, worker",
    help: "Jobs in a BullMQ queue by state, read from Redis at scrape time; every process reads the same queues, so aggregate with max.",
  },
  queueCollectErrors: {
    name: "queue_jobs_collect_errors_total",
    type: "counter",
    labels: ["queue"],
    exportedBy: "gateway, worker",
    help: "Scrapes that could not read a queue's job counts in time; that scrape has no queue_jobs series for the queue.",
  },
} as const;

export type MetricKey = keyof typeof METRIC_DEFINITIONS;

/** Every metric name, without the deployment's METRICS_PREFIX. */
export const METRIC_NAMES = Object.fromEntries(Object.entries(METRIC_DEFINITIONS).map(([key, definition]) => [key, definition.name])) as {
  [K in MetricKey]: (typeof METRIC_DEFINITIONS)[K]["name"];
};

/** `route` of a request that matched no route; raw paths never become labels (they hold task ids). */
export const UNMATCHED_ROUTE = "unmatched";

/** `code` of a task that finished without an error code (every completed task), `provider` of one that never reached one. */
export const NO_CODE = "none";

/** The reconcilers' repair kinds (`reconciler_repairs_total{kind}`). */
export const REPAIR_KINDS = { taskRequeued: "task_requeued", attemptLost: "attempt_lost", deliveryRequeued: "delivery_requeued" } as const;
export type RepairKind = (typeof REPAIR_KINDS)[keyof typeof REPAIR_KINDS];
