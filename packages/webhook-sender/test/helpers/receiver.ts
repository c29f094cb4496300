import { once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import https from "node:https";
import net from "node:net";
import type { KeyPair } from "./test-pki.ts";

interface ReceivedRequest {
  method: string;
  /** The request-target exactly as it came off the wire. */
  url: string;
  rawHeaders: string[];
  body: Buffer;
  localAddress: string;
}

export type Handler = (request: IncomingMessage, response: ServerResponse, body: Buffer) => void;

export interface Receiver {
  host: string;
  port: number;
  requests: ReceivedRequest[];
  /** TCP connections accepted, counted before any TLS. */
  connections: () => number;
  closedConnections: () => number;
  /** Resolves once `count` connections have closed. */
  waitForClosedConnections(count: number): Promise<void>;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  tls: KeyPair;
  host?: string;
  port?: number;
  handler?: Handler;
}

export const answerWith =
  (status: number, headers: Record<string, string> = {}, text = ""): Handler =>
  (_request, response) => {
    response.writeHead(status, headers);
    response.end(text);
  };

/** An HTTPS receiver on a loopback address. */
export async function startReceiver(options: ReceiverOptions): Promise<Receiver> {
  const host = options.host ?? "127.0.0.1";
  const handler = options.handler ?? answerWith(200, { "content-type": "text/plain" }, "ok");
  const requests: ReceivedRequest[] = [];
  let connections = 0;
  let closed = 0;
  const closeWaiters: Array<{ count: number; resolve: () => void }> = [];

  const server = https.createServer({ key: options.tls.key, cert: options.tls.cert }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      requests.push({
        method: request.method ?? "",
        url: request.url ?? "",
        rawHeaders: [...request.rawHeaders],
        body,
        localAddress: request.socket.localAddress ?? "",
      });
      handler(request, response, body);
    });
  });
  server.on("connection", (socket: net.Socket) => {
    connections += 1;
    socket.on("close", () => {
      closed += 1;
      for (const waiter of closeWaiters.filter((entry) => closed >= entry.count)) {
        closeWaiters.splice(closeWaiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    });
  });
  // Failed handshakes are expected in the TLS tests.
  server.on("tlsClientError", () => undefined);

  server.listen(options.port ?? 0, host);
  await once(server, "listening");
  const port = (server.address() as net.AddressInfo).port;

  return {
    host,
    port,
    requests,
    connections: () => connections,
    closedConnections: () => closed,
    waitForClosedConnections(count) {
      if (closed >= count) return Promise.resolve();
      return new Promise((resolve) => closeWaiters.push({ count, resolve }));
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Two receivers on the same port of two loopback addresses (one URL, two possible peers). */
export async function startReceiverPair(first: ReceiverOptions & { host: string }, second: ReceiverOptions & { host: string }): Promise<[Receiver, Receiver]> {
  for (let tries = 0; tries < 20; tries += 1) {
    const a = await startReceiver(first);
    try {
      const b = await startReceiver({ ...second, port: a.port });
      return [a, b];
    } catch {
      await a.close();
    }
  }
  throw new Error("no port free on both addresses");
}

/** A loopback port with nothing listening on it. */
export async function closedPort(host = "127.0.0.1"): Promise<number> {
  const server = net.createServer();
  server.listen(0, host);
  await once(server, "listening");
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
