import { createServer, type RequestListener, type Server } from "node:http";
import type { HttpConfig } from "@gen/config";

// How often Node looks for connections past their header or request deadline. Its default, 30 s,
// let a connection trickling its headers live up to HTTP_HEADERS_TIMEOUT_MS + 30 s.
const DEADLINE_CHECK_MS = 1000;
// At most one log line per this while connections are being refused at the cap.
const DROP_LOG_EVERY_MS = 10_000;

/** The one log call this needs (a winston logger, or the metrics server's). */
interface ListenerLogger {
  warn(message: string, fields: Record<string, unknown>): unknown;
}

/**
 * Every HTTP listener: the header and request deadlines, the keep-alive idle time and the
 * connection cap of HTTP_* (docs/configuration.md), applied by Node itself. A connection past the
 * cap is closed as soon as it is accepted; the refusals are logged. Every interface unless `host`
 * is given. Resolves once listening.
 */
export async function listenHttp(handler: RequestListener, port: number, limits: HttpConfig, logger: ListenerLogger, host?: string): Promise<Server> {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: DEADLINE_CHECK_MS,
    },
    handler,
  );
  server.maxConnections = limits.maxConnections;
  let dropped = 0;
  let lastLog = 0;
  server.on("drop", () => {
    dropped++;
    if (Date.now() - lastLog < DROP_LOG_EVERY_MS) return;
    lastLog = Date.now();
    logger.warn("connections refused: HTTP_MAX_CONNECTIONS reached", { max_connections: limits.maxConnections, refused_total: dropped });
  });
  server.listen(port, host);
  await new Promise<void>((resolve, reject) => server.once("listening", resolve).once("error", reject));
  return server;
}
