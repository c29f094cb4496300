import { once } from "node:events";
import net from "node:net";

export interface RedisMonitor {
  /** The name of every client command seen whose arguments name a key under the prefix, in order. */
  commands: string[];
  stop(): void;
}

/**
 * Counts client round trips on the wire: MONITOR on a plain socket, one line per command
 * (`+<time> [<db> <client>] "<command>" "<arg>" ...`; a command run inside a script shows
 * `lua` as its client and is not counted). ioredis's own monitor mode throws ("Command queue
 * state error") when other clients' lines arrive in the same read as MONITOR's answer, which a
 * busy shared Redis does: a socket of its own reads whatever comes.
 */
export async function monitorRedis(port: number, prefix: string): Promise<RedisMonitor> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  const commands: string[] = [];
  let pending = "";
  let answered: () => void;
  const monitoring = new Promise<void>((resolve) => (answered = resolve));
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    const lines = (pending + chunk).split("\r\n");
    // The last piece is a line still arriving (empty when the chunk ended one).
    pending = lines.pop()!;
    for (const line of lines) {
      if (line === "+OK") answered();
      const seen = /^\+\d+\.\d+ \[\d+ ([^\]]+)\] "([^"]*)"/.exec(line);
      if (seen && seen[1] !== "lua" && line.includes(`"${prefix}:`)) commands.push(seen[2]!);
    }
  });
  socket.write("MONITOR\r\n");
  await monitoring;
  return { commands, stop: () => socket.destroy() };
}
