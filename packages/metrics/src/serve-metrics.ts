import type { Server } from "node:http";
import type { HttpConfig } from "@gen/config";
import { listenHttp } from "@gen/http";
import type { Metrics } from "./create-metrics.ts";
import type { MetricsServerLogger } from "./metrics-server-logger.ts";
import { renderMetrics, type RenderedMetrics } from "./render-metrics.ts";

export interface ServeMetricsOptions {
  port: number;
  /** Defaults to every interface, so that a scraper in another container reaches it. */
  host?: string;
  /** The HTTP_* limits of every listener: a trickling or surplus scraper costs what it costs on the API port. */
  http: HttpConfig;
  logger: MetricsServerLogger;
}

/**
 * A bare HTTP server answering only `GET /metrics`, for processes without an HTTP API (the
 * worker). Resolves once listening; close it with `server.close()`.
 */
export async function serveMetrics(metrics: Metrics, options: ServeMetricsOptions): Promise<Server> {
  return serveRendered(() => renderMetrics(metrics), options);
}

/** The same endpoint over any exposition (a cluster primary's is its children's, merged). */
export async function serveRendered(render: () => Promise<RenderedMetrics>, options: ServeMetricsOptions): Promise<Server> {
  return listenHttp(
    (req, res) => {
      const path = (req.url ?? "").split("?")[0];
      if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
        res.writeHead(404, { "Content-Type": "text/plain" }).end("not found\n");
        return;
      }
      render().then(
        ({ contentType, body }) => res.writeHead(200, { "Content-Type": contentType }).end(req.method === "HEAD" ? undefined : body),
        () => res.writeHead(500, { "Content-Type": "text/plain" }).end("metrics unavailable\n"),
      );
    },
    options.port,
    options.http,
    options.logger,
    options.host,
  );
}
