import type { Server } from "node:http";
import type { Logger } from "@gen/logger";
import { serveMetrics, type Metrics } from "@gen/metrics";

/**
 * The worker's Prometheus endpoint on WORKER_METRICS_PORT (0: none). A port already taken (a
 * second worker on the same host) is logged, not fatal: jobs matter more than their metrics.
 */
export async function startMetricsServer(metrics: Metrics, port: number, logger: Logger): Promise<Server | undefined> {
  if (port === 0) return undefined;
  try {
    const server = await serveMetrics(metrics, { port });
    logger.info("worker metrics listening", { port });
    return server;
  } catch (error) {
    logger.error("worker metrics server could not start; running without it", { port, err: error });
    return undefined;
  }
}
