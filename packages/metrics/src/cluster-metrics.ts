import type { Server } from "node:http";
import { AggregatorRegistry } from "prom-client";
import type { HttpConfig } from "@gen/config";
import type { Metrics } from "./create-metrics.ts";
import type { MetricsServerLogger } from "./metrics-server-logger.ts";
import { startRenderedServer } from "./start-metrics-server.ts";

/**
 * In a cluster child: answer the primary's scrape requests (prom-client's IPC) with this
 * process's registry. Our registries are never prom-client's global one, so it must be named.
 */
export function shareMetricsWithPrimary(metrics: Metrics): void {
  // The constructor installs the IPC listener (in a child, the one that answers the primary).
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([metrics.registry]);
}

/**
 * In a cluster primary: one Prometheus endpoint for all children (N processes cannot each bind
 * the metrics port), merged by prom-client's AggregatorRegistry: counters and histograms summed,
 * queue depths by max since every child reads the same queues.
 */
export function startClusterMetricsServer(port: number, http: HttpConfig, logger: MetricsServerLogger, processName: string): Promise<Server | undefined> {
  const aggregator = new AggregatorRegistry();
  return startRenderedServer(async () => ({ contentType: aggregator.contentType, body: await aggregator.clusterMetrics() }), port, http, logger, processName);
}
