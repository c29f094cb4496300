import { execFile, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import { promisify } from "node:util";

const run = promisify(execFile);

/** One redis-server (or sentinel) of the test's own; stopped by its pid, never by name. */
export interface RedisProcess {
  port: number;
  kill(): Promise<void>;
  /** Starts it again with the same arguments (same port and directory). */
  start(): Promise<void>;
}

export async function startRedisProcess(port: number, args: string[]): Promise<RedisProcess> {
  let child: ChildProcess | undefined;
  const proc: RedisProcess = {
    port,
    async start() {
      child = spawn("redis-server", args, { stdio: "ignore" });
      await waitFor(async () => (await cli(port, "PING").catch(() => "")) === "PONG", 15_000, `redis on ${port} answering`);
    },
    async kill() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      running.kill("SIGKILL");
      await once(running, "exit");
    },
  };
  await proc.start();
  return proc;
}

/** redis-cli against a loopback port; the answer trimmed. */
export async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], { timeout: 10_000 });
  return stdout.trim();
}

export async function waitFor(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function bindable(port: number): Promise<boolean> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

const taken = new Set<number>();

/**
 * `count` free loopback ports, each with port + 10000 free as well (a cluster node's bus port), in
 * a range below the ephemeral ports so a client socket does not take one meanwhile.
 */
export async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    if (taken.has(port) || taken.has(port + 10_000) || taken.has(port - 10_000)) continue;
    if ((await bindable(port)) && (await bindable(port + 10_000))) {
      taken.add(port);
      ports.push(port);
    }
  }
  return ports;
}
