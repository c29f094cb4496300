import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createDatabase, type Database } from "@gen/db";
import { createUser } from "../../../apps/gateway/test/support/test-gateway.ts";
import { closedPort } from "../../../packages/webhook-sender/test/helpers/receiver.ts";
import { startApp, type AppProcess } from "./app-process.ts";
import { deletePrefixAt } from "../../support/redis-keys.ts";
import { testPrefix } from "../../support/run-scope.ts";

export interface FaultStackOptions {
  databaseUrl: string;
  redisUrl: string;
  /** Extra environment for both apps (the receiver's childEnv, shorter timings, ...). */
  env?: Record<string, string>;
}

interface ApiAnswer {
  status: number;
  body: Record<string, any>;
  /** Request sent → body read. */
  ms: number;
}

export interface FaultStack {
  baseUrl: string;
  env: Record<string, string>;
  /** The test's own handle on the apps' database, for checks. */
  db: Database;
  gateway: AppProcess;
  workers: AppProcess[];
  startWorker(): Promise<AppProcess>;
  user(credits?: number): Promise<{ userId: string; auth: string }>;
  call(auth: string, method: string, pathname: string, body?: unknown): Promise<ApiAnswer>;
  /** The last lines of every app process, for a failure report. */
  tails(): string;
  close(): Promise<void>;
}

// Short enough that three attempts and the reconciler fit a scenario; the config requires
// FINAL >= RETRY + 2 x TIMEOUT + 2 s + 2 x RECONCILE_INTERVAL (attempt 2 recovered in its window).
const FAULT_TIMINGS = {
  JOB_LOCK_MS: "2000",
  RECONCILE_INTERVAL_MS: "1000",
  WEBHOOK_TIMEOUT_MS: "3000",
  WEBHOOK_RETRY_DELAY_MS: "1000",
  WEBHOOK_FINAL_ATTEMPT_MS: "11000",
};

/**
 * The real gateway and worker processes (main.ts from sources; `pnpm start` runs it compiled) on
 * the given PostgreSQL database and Redis, under a QUEUE_PREFIX of their own.
 */
export async function startFaultStack(options: FaultStackOptions): Promise<FaultStack> {
  const port = await closedPort();
  const storageDir = mkdtempSync(path.join(os.tmpdir(), "faults-storage-"));
  const env: Record<string, string> = {
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl,
    QUEUE_PREFIX: testPrefix("faults"),
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    STORAGE_DIR: storageDir,
    WORKER_METRICS_PORT: "0",
    GATEWAY_METRICS_PORT: "0",
    POLL_RATE_PER_SEC: "100000",
    POLL_RATE_BURST: "100000",
    SUBMIT_RATE_PER_SEC: "100000",
    SUBMIT_RATE_BURST: "100000",
    BAD_KEY_RATE_PER_MIN: "6000000",
    BAD_KEY_BURST: "100000",
    LOG_LEVEL: "warn",
    ...FAULT_TIMINGS,
    ...options.env,
  };
  const db = createDatabase(options.databaseUrl);
  const workers: AppProcess[] = [];
  const exited: AppProcess[] = [];
  let gateway: AppProcess | undefined;
  let workerCount = 0;

  const stack: FaultStack = {
    baseUrl: env.BASE_URL!,
    env,
    db,
    get gateway() {
      return gateway!;
    },
    workers,
    async startWorker() {
      const worker = await startApp("worker", env, `worker-${++workerCount}`);
      worker.child.once("exit", () => {
        const index = workers.indexOf(worker);
        if (index !== -1) workers.splice(index, 1);
        exited.push(worker);
      });
      workers.push(worker);
      return worker;
    },
    user: (credits = 1_000_000) => createUser(db, credits),
    async call(auth, method, pathname, body) {
      const started = Date.now();
      const res = await fetch(`${env.BASE_URL}${pathname}`, {
        method,
        headers: { Authorization: auth, ...(body ? { "Content-Type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(15_000),
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : {}, ms: Date.now() - started };
    },
    tails: () =>
      [gateway, ...workers, ...exited]
        .filter((p) => p !== undefined)
        .map((p) => p.tail())
        .join("\n"),
    async close() {
      if (process.env.FAULTS_VERBOSE) process.stderr.write(`app output:\n${stack.tails()}\n`);
      await Promise.all([gateway, ...workers].map((p) => p?.kill("SIGKILL")));
      await db.$disconnect().catch(() => {});
      await deletePrefixAt(options.redisUrl, env.QUEUE_PREFIX!).catch(() => {});
      rmSync(storageDir, { recursive: true, force: true });
    },
  };
  try {
    gateway = await startApp("gateway", env);
    await stack.startWorker();
  } catch (error) {
    await stack.close();
    throw error;
  }
  return stack;
}

/** For `.catch()` in a scenario: prints the apps' last log lines, then fails with the error. */
export function failWithAppOutput(stack: FaultStack | undefined, error: unknown): never {
  process.stderr.write(`app output:\n${stack?.tails() ?? "(no stack)"}\n`);
  throw error;
}
