import type { Metrics } from "./create-metrics.ts";

export interface UpstreamRequestSample {
  /** The catalog `provider` of the route called. */
  provider: string;
  operation: "submit" | "poll" | "cancel";
  /** `ok`, the provider's HTTP status, `network` or `refused` (upstream_request_duration_seconds). */
  status: string;
  seconds: number;
}

/** Times one provider call. A process without metrics passes undefined and nothing happens. */
export function recordUpstreamRequest(metrics: Metrics | undefined, sample: UpstreamRequestSample): void {
  metrics?.upstreamRequestDuration.observe({ provider: sample.provider, operation: sample.operation, status: sample.status }, Math.max(0, sample.seconds));
}
