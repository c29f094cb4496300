/** Every metric name this service exports; docs/operations.md lists them with their labels. */
export const METRIC_NAMES = {
  httpRequests: "http_requests_total",
  httpRequestDuration: "http_request_duration_seconds",
  tasksFinished: "tasks_finished_total",
  generationDuration: "generation_duration_seconds",
  webhookAttempts: "webhook_attempts_total",
  webhookDispatch: "webhook_dispatch_seconds",
  webhookCapFull: "webhook_cap_full_total",
  webhookDelayed: "webhook_attempts_delayed_total",
  queueJobs: "queue_jobs",
  queueCollectErrors: "queue_jobs_collect_errors_total",
} as const;

/** `route` of a request that matched no route; raw paths never become labels (they hold task ids). */
export const UNMATCHED_ROUTE = "unmatched";

/** `code` of a task that finished without an error code (every completed task). */
export const NO_CODE = "none";
