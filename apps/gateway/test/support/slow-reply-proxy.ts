import net from "node:net";

export interface SlowReplyProxy {
  port: number;
  /** Delay applied to every reply from now on (requests are always forwarded at once). */
  delayMs: number;
  close(): void;
}

/**
 * A TCP proxy on loopback in front of a real server whose replies can be held back: the server
 * does the work at once, the client learns of it late (a slow network or an overloaded Redis).
 */
export async function slowReplyProxy(targetPort: number): Promise<SlowReplyProxy> {
  const sockets = new Set<net.Socket>();
  const proxy: SlowReplyProxy = { port: 0, delayMs: 0, close: () => undefined };
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, "127.0.0.1");
    sockets.add(client).add(upstream);
    client.on("data", (chunk) => upstream.write(chunk));
    upstream.on("data", (chunk) => {
      const delay = proxy.delayMs;
      if (delay === 0) client.write(chunk);
      else setTimeout(() => client.writable && client.write(chunk), delay).unref();
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.port = (server.address() as net.AddressInfo).port;
  proxy.close = () => {
    for (const socket of sockets) socket.destroy();
    server.close();
  };
  return proxy;
}
