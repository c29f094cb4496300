import type { Server } from "node:http";
import type { HttpConfig } from "@gen/config";
import type { Metrics } from "./create-metrics.ts";
import type { MetricsServerLogger } from "./metrics-server-logger.ts";
import { renderMetrics, type RenderedMetrics } from "./render-metrics.ts";
import { serveRendered } from "./serve-metrics.ts";

/**
 * A process's Prometheus endpoint on its own port (0: none), kept off the public API listener so
 * that queue depths and traffic figures are not served to the internet. A port already taken (a
 * second process on the same host) is logged, not fatal: requests and jobs matter more than their
 * metrics.
 */
export function startMetricsServer(
  metrics: Metrics,
  port: number,
  http: HttpConfig,
  logger: MetricsServerLogger,
  processName: string,
): Promise<Server | undefined> {
  return startRenderedServer(() => renderMetrics(metrics), port, http, logger, processName);
}

/** startMetricsServer over any exposition (a cluster primary serves its children's, merged). */
export async function startRenderedServer(
  render: () => Promise<RenderedMetrics>,
  port: number,
  http: HttpConfig,
  logger: MetricsServerLogger,
  processName: string,
): Promise<Server | undefined> {
  if (port === 0) return undefined;
  try {
    const server = await serveRendered(render, { port, http, logger });
    logger.info(`${processName} metrics listening`, { port });
    return server;
  } catch (error) {
    logger.error(`${processName} metrics server could not start; running without it`, { port, err: error });
    return undefined;
  }
}
