import type { Metrics } from "./create-metrics.ts";

export interface RenderedMetrics {
  contentType: string;
  body: string;
}

/** The Prometheus text exposition of the registry; queue depths are read from Redis now. */
export async function renderMetrics(metrics: Metrics): Promise<RenderedMetrics> {
  return { contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
}
