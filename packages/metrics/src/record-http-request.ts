import type { Metrics } from "./create-metrics.ts";

export interface HttpRequestSample {
  method: string;
  /** The route pattern (`/api/v1/tasks/:id`) or UNMATCHED_ROUTE; never a raw path. */
  route: string;
  status: number;
  seconds: number;
}

export function recordHttpRequest(metrics: Metrics, sample: HttpRequestSample): void {
  const labels = { method: sample.method, route: sample.route, status: String(sample.status) };
  metrics.httpRequests.inc(labels);
  metrics.httpRequestDuration.observe(labels, sample.seconds);
}
