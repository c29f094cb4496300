import cluster, { type Worker } from "node:cluster";
import type { Config } from "@gen/config";
import type { Logger } from "@gen/logger";
import { startClusterMetricsServer } from "@gen/metrics";

// A child that fails this many times in a row before listening (PostgreSQL or Redis down at
// start, a bad port) will not start: the primary stops rather than loop.
const MAX_START_FAILURES = 5;
const RESTART_BASE_MS = 200;
const RESTART_MAX_MS = 10_000;
// Exits within this window count towards the restart pause.
const CRASH_WINDOW_MS = 60_000;
// Children drain within drainOnSignal's 10 s; past this the primary stops waiting for them.
const STOP_GRACE_MS = 15_000;

interface ReadyMessage {
  ready: "gateway";
  port: number;
}

const isReady = (message: unknown): message is ReadyMessage =>
  typeof message === "object" && message !== null && (message as { ready?: unknown }).ready === "gateway";

/**
 * GATEWAY_PROCESSES > 1: this process is a supervisor only (no database, no Redis, no requests).
 * It starts one child first, so that a start-up failure prints the child's one line and exits 1
 * exactly as a single gateway does, then the others, all listening on PORT through node:cluster.
 * `ready` goes to the parent (scripts/start.mjs) once every child listens. A child that dies is
 * replaced after a growing pause; SIGTERM or SIGINT is forwarded and the children drain.
 */
export async function runCluster(config: Config, logger: Logger): Promise<void> {
  const listening = new Set<Worker>();
  const recentExits: number[] = [];
  let started = false;
  let stopping = false;
  let startFailures = 0;
  let port = config.port;

  const fork = (): Promise<boolean> =>
    new Promise((resolve) => {
      const worker = cluster.fork();
      worker.on("message", (message: unknown) => {
        if (!isReady(message)) return;
        port = message.port;
        listening.add(worker);
        startFailures = 0;
        resolve(true);
      });
      worker.once("exit", (code, signal) => {
        const wasListening = listening.delete(worker);
        resolve(false);
        if (stopping || !started) return;
        if (!wasListening) startFailures++;
        logger.error("gateway process exited; restarting it", { pid: worker.process.pid, code, signal, listening: wasListening });
        if (startFailures >= MAX_START_FAILURES) return stop(1);
        const now = Date.now();
        recentExits.push(now);
        while (recentExits[0]! < now - CRASH_WINDOW_MS) recentExits.shift();
        setTimeout(() => !stopping && void fork(), restartDelay(recentExits.length)).unref();
      });
    });

  const stop = (code: number): void => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    setTimeout(() => {
      for (const w of workers) w.process.kill("SIGKILL");
      process.exit(1);
    }, STOP_GRACE_MS).unref();
    let failed = code !== 0;
    let left = workers.length;
    if (left === 0) process.exit(code);
    for (const w of workers) {
      w.once("exit", (exitCode) => {
        if (exitCode !== 0) failed = true;
        if (--left === 0) process.exit(failed ? 1 : 0);
      });
      w.process.kill("SIGTERM");
    }
  };

  const shutdown = (signal: string) => {
    logger.info("gateway shutting down", { signal, processes: listening.size });
    stop(0);
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);

  // The first child alone: if it cannot start, neither could the others, and one line is enough.
  if (!(await fork())) process.exit(1);
  started = true;
  await Promise.all(Array.from({ length: config.gatewayProcesses - 1 }, fork));
  // A sibling that failed is being restarted; ready means every process listens.
  while (listening.size < config.gatewayProcesses && !stopping) await new Promise((resolve) => setTimeout(resolve, 50));
  if (stopping) return;

  // Left open while the children drain (a scrape still answers); process.exit ends it.
  await startClusterMetricsServer(config.gatewayMetricsPort, config.http, logger, "gateway");
  logger.info("gateway listening", { port, processes: config.gatewayProcesses, base_url: config.baseUrl });
  process.send?.({ ready: "gateway", port });
}

/** 200 ms, 400 ms, ... up to 10 s with each exit in the last minute: a crash loop does not spin the CPU. */
function restartDelay(recentExits: number): number {
  return Math.min(RESTART_BASE_MS * 2 ** (recentExits - 1), RESTART_MAX_MS);
}
