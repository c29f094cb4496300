import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createRedis } from "@gen/queues";

type Redis = ReturnType<typeof createRedis>;
import { closedPort } from "../../../packages/webhook-sender/test/helpers/receiver.ts";

export interface PrivateRedis {
  url: string;
  /** SIGKILL, then start again on the same port: every key is gone, as after a real crash without persistence. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** SIGSTOP / SIGCONT: connections stay open and nothing answers (a hung server). */
  pause(): void;
  resume(): void;
}

/**
 * A Redis server of the test's own on a spare loopback port, without persistence. The machine's
 * Redis (6379) is shared with other tests and must never be stopped.
 */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await closedPort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const start = async () => {
    child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"], {
      stdio: "ignore",
    });
    await waitForPing(url);
  };
  const kill = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    running.kill("SIGKILL");
    await once(running, "exit");
  };

  await start();
  return {
    url,
    async restart() {
      await kill();
      await start();
    },
    stop: kill,
    pause: () => child?.kill("SIGSTOP"),
    resume: () => child?.kill("SIGCONT"),
  };
}

async function waitForPing(url: string): Promise<void> {
  (await connectRedis(url, 10_000)).disconnect();
}

/** A `request` client (fails fast, no offline queue) once it answers PING. */
export async function connectRedis(url: string, timeoutMs: number): Promise<Redis> {
  const client = createRedis(url, "request");
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (client.status === "ready" && (await client.ping().catch(() => null)) === "PONG") return client;
    if (Date.now() > deadline) {
      client.disconnect();
      throw new Error(`Redis at ${url} did not answer within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
