export { createMetrics, type Metrics, type MetricsOptions } from "./create-metrics.ts";
export { METRIC_NAMES, NO_CODE, UNMATCHED_ROUTE } from "./metric-names.ts";
export { QUEUE_STATES, type CountableQueue } from "./queue-depth.ts";
export { recordHttpRequest, type HttpRequestSample } from "./record-http-request.ts";
export { recordTaskFinished, type FinishedTask } from "./record-task-finished.ts";
export { recordWebhookAttempt } from "./record-webhook-attempt.ts";
export { renderMetrics, type RenderedMetrics } from "./render-metrics.ts";
export { serveMetrics, type ServeMetricsOptions } from "./serve-metrics.ts";
export { startMetricsServer, type MetricsServerLogger } from "./start-metrics-server.ts";
