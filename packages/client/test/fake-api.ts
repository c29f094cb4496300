import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

interface FakeReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Destroy the socket instead of answering (a network error for the client). */
  drop?: boolean;
}

type FakeRoute = (req: RecordedRequest) => FakeReply;

/** A programmable stand-in for the API on 127.0.0.1: routes by "METHOD /path" (query ignored). */
export interface FakeApi {
  baseUrl: string;
  requests: RecordedRequest[];
  route(key: string, handler: FakeRoute | FakeReply[]): void;
  close(): Promise<void>;
}

export async function startFakeApi(): Promise<FakeApi> {
  const routes = new Map<string, FakeRoute>();
  const requests: RecordedRequest[] = [];
  let counter = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const recorded: RecordedRequest = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      };
      requests.push(recorded);
      const key = `${req.method} ${req.url!.split("?")[0]}`;
      const handler = routes.get(key);
      const reply: FakeReply = handler
        ? handler(recorded)
        : { status: 404, body: { error: { code: 40002, message: `no route ${key}`, request_id: "req_none" } } };
      if (reply.drop) {
        req.socket.destroy();
        return;
      }
      const requestId = `req_${String(++counter).padStart(24, "0")}`;
      res.writeHead(reply.status, { "Content-Type": "application/json", "X-Request-Id": requestId, ...reply.headers });
      res.end(reply.body === undefined ? "" : JSON.stringify(reply.body));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    route(key, handler) {
      if (Array.isArray(handler)) {
        // A script of replies, the last one repeating.
        let i = 0;
        routes.set(key, () => handler[Math.min(i++, handler.length - 1)]!);
      } else routes.set(key, handler);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export function task(id: string, status: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const done = status === "completed";
  return {
    id,
    model: "sim-image-1",
    status,
    created_at: 1_700_000_000,
    output: done ? { image_urls: ["http://cdn/x.png"] } : null,
    usage: { credits: done ? 10 : 0 },
    error: null,
    ...extra,
  };
}

export function envelope(code: number, message: string, requestId = "req_0123456789abcdef01234567") {
  return { error: { code, message, request_id: requestId } };
}
