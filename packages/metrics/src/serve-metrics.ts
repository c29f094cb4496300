import { createServer, type Server } from "node:http";
import type { Metrics } from "./create-metrics.ts";
import { renderMetrics, type RenderedMetrics } from "./render-metrics.ts";

export interface ServeMetricsOptions {
  port: number;
  /** Defaults to every interface, so that a scraper in another container reaches it. */
  host?: string;
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
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found\n");
      return;
    }
    render().then(
      ({ contentType, body }) => res.writeHead(200, { "Content-Type": contentType }).end(req.method === "HEAD" ? undefined : body),
      () => res.writeHead(500, { "Content-Type": "text/plain" }).end("metrics unavailable\n"),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}
