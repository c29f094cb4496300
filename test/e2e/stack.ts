import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Worker } from "bullmq";
import { loadConfig, type Config } from "@gen/config";
import { ensureUser, inTransaction, insertApiKey, readCredits } from "@gen/db";
import { TaskStatus } from "@gen/domain";
import { hashApiKey, newApiKey, newKeyId, newUserId } from "@gen/ids";
import { grantCredits } from "@gen/ledger";
import { createLogger } from "@gen/logger";
import { createRedis } from "@gen/queues";
import { createDownloadGuard, createStorage } from "@gen/storage";
import { lookup as dnsLookup } from "node:dns";
import type { WebhookLookup as AddressLookup } from "@gen/webhook-sender";
import { createScratchDatabase } from "../support/scratch-database.ts";
import { createUpstreamSim } from "../../apps/upstream-sim/src/create-upstream-sim.ts";
import { createApp } from "../../apps/gateway/src/create-app.ts";
import { buildDeps, closeDeps } from "../../apps/gateway/src/services/build-deps.ts";
import type { GatewayDeps } from "../../apps/gateway/src/services/gateway-deps.ts";
import type { WebhookSender } from "@gen/webhook-sender";
import { createDeliveryWorker } from "../../apps/worker/src/delivery/index.ts";
import { createGenerationWorker } from "../../apps/worker/src/generation/create-generation-worker.ts";
import { createProviderRegistry } from "../../apps/worker/src/generation/provider-registry.ts";
import { deletePrefixAt } from "../support/redis-keys.ts";
import { testPrefix } from "../support/run-scope.ts";

export interface Stack {
  baseUrl: string;
  config: Config;
  gateway: GatewayDeps;
  env: Record<string, string>;
  startWorker(): Worker;
  startDeliveryWorker(sender: WebhookSender): void;
  user(credits?: number): Promise<{ userId: string; auth: string }>;
  submit(auth: string, path: string, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, any> }>;
  get(auth: string, path: string): Promise<{ status: number; body: Record<string, any> }>;
  waitTerminal(auth: string, taskId: string, timeoutMs?: number): Promise<Record<string, any>>;
  close(): Promise<void>;
}

/**
 * Names under `.blocked.test` resolve to 127.0.0.2: loopback, but outside the stack's
 * UPSTREAM_ALLOWED_CIDRS (by default just UPSTREAM_URL's 127.0.0.1), so they stand for an
 * address an upstream must not make the worker fetch. Everything else resolves normally.
 */
export const BLOCKED_NAME_SUFFIX = ".blocked.test";
const e2eLookup: AddressLookup = (hostname, options, callback) => {
  if (hostname.endsWith(BLOCKED_NAME_SUFFIX)) return setImmediate(() => callback(null, [{ address: "127.0.0.2", family: 4 }]));
  dnsLookup(hostname, options, callback);
};

async function listen(server: http.Server): Promise<number> {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return (server.address() as AddressInfo).port;
}

export interface StackOptions {
  /** The apps' DATABASE_URL for the stack's own database (a pooler in front of it); default: that database's URL. */
  databaseUrl?: (direct: string) => string;
  /**
   * Providers call back: UPSTREAM_CALLBACK_URL is the stack's own gateway (an address known only
   * once it listens), with a secret, so upstream jobs are created with a webhook to it.
   */
  upstreamCallbacks?: boolean;
  /** The gateway's webhook sender (the console's test webhooks): one that resolves the test's receiver names and trusts its CA. */
  webhookSender?: WebhookSender;
}

/** Signs the stack's callback tokens when `upstreamCallbacks` is on. */
const CALLBACK_SECRET = "e2e-upstream-callback-secret-0123456789";

/**
 * The whole service on loopback: a real gateway HTTP server (so media URLs can be fetched), the
 * upstream simulator, and generation workers started on demand, on a PostgreSQL database and a
 * Redis QUEUE_PREFIX of their own.
 */
export async function startStack(extraEnv: Record<string, string> = {}, options: StackOptions = {}): Promise<Stack> {
  const upstreamServer = http.createServer();
  const upstreamPort = await listen(upstreamServer);
  upstreamServer.on("request", createUpstreamSim({ publicUrl: `http://127.0.0.1:${upstreamPort}` }));

  const server = http.createServer();
  const port = await listen(server);
  // A database per stack: reconcilers and workers scan whole tables, and must see only this stack's tasks.
  const database = await createScratchDatabase();
  const env: Record<string, string> = {
    DATABASE_URL: options.databaseUrl?.(database.url) ?? database.url,
    QUEUE_PREFIX: testPrefix("e2e"),
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    STORAGE_DIR: mkdtempSync(path.join(os.tmpdir(), "gen-storage-")),
    UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}`,
    POLL_RATE_PER_SEC: "10000",
    POLL_RATE_BURST: "10000",
    SUBMIT_RATE_PER_SEC: "10000",
    SUBMIT_RATE_BURST: "10000",
    LOG_LEVEL: "silent",
    ...(options.upstreamCallbacks ? { UPSTREAM_CALLBACK_URL: `http://127.0.0.1:${port}`, UPSTREAM_CALLBACK_SECRET: CALLBACK_SECRET } : {}),
    ...extraEnv,
  };
  const config = loadConfig(env);
  const logger = createLogger("e2e", config.logLevel);
  const built = buildDeps(config, logger);
  if (options.webhookSender) built.webhookSender.close();
  const gateway: GatewayDeps = options.webhookSender ? { ...built, webhookSender: options.webhookSender } : built;
  server.on("request", createApp(gateway));
  const workers: { worker: Worker; close(): Promise<void> }[] = [];
  const baseUrl = config.baseUrl;

  const call = async (auth: string, method: string, pathname: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${pathname}`, {
      method,
      headers: { Authorization: auth, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  const stack: Stack = {
    baseUrl,
    config,
    gateway,
    env,
    startWorker() {
      const redis = createRedis(config.redisUrl, "blocking");
      const downloadGuard = createDownloadGuard({ allowedCidrs: config.upstreamAllowedCidrs, lookup: e2eLookup });
      const worker = createGenerationWorker(
        {
          config,
          db: gateway.db,
          catalog: gateway.catalog,
          providers: createProviderRegistry(gateway.catalog, config),
          storage: createStorage(config),
          downloadGuard,
          webhookQueue: gateway.webhookQueue,
          generationQueue: gateway.generationQueue,
          logger,
        },
        redis,
      );
      workers.push({
        worker,
        close: async () => {
          await worker.close();
          downloadGuard.close();
          redis.disconnect();
        },
      });
      return worker;
    },
    startDeliveryWorker(sender) {
      const redis = createRedis(config.redisUrl, "blocking");
      const delivery = createDeliveryWorker({ config, db: gateway.db, redis, logger, sender });
      workers.push({
        worker: delivery.worker,
        close: async () => {
          await delivery.close();
          redis.disconnect();
        },
      });
    },
    async user(credits = 100_000) {
      const userId = newUserId();
      const apiKey = newApiKey();
      await inTransaction(gateway.db, async (tx) => {
        await ensureUser(tx, userId);
        await grantCredits(tx, userId, credits);
        await insertApiKey(tx, { id: newKeyId(), userId, keyHash: hashApiKey(apiKey) });
      });
      return { userId, auth: `Bearer ${apiKey}` };
    },
    submit: (auth, pathname, body) => call(auth, "POST", pathname, body),
    get: (auth, pathname) => call(auth, "GET", pathname),
    async waitTerminal(auth, taskId, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const { body } = await call(auth, "GET", `/api/v1/tasks/${taskId}?include=billing,webhook`);
        if (body.status === "completed" || body.status === "failed") return body;
        if (Date.now() > until) throw new Error(`task ${taskId} still ${body.status} after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      server.closeAllConnections();
      upstreamServer.closeAllConnections();
      await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => upstreamServer.close(r))]);
      await closeDeps(gateway);
      await deletePrefixAt(config.redisUrl, config.queuePrefix);
      await database.drop();
    },
  };
  return stack;
}

/** docs/api.md#credits-and-refunds: balance = sum of the ledger; every terminal task has reserve = charge + refund. */
export async function ledgerHolds(stack: Stack, userId: string): Promise<void> {
  const db = stack.gateway.db;
  const sum = await db.$kysely
    .selectFrom("ledger_entries")
    .select((eb) => eb.fn.sum<string>("delta").as("sum"))
    .where("user_id", "=", userId)
    .executeTakeFirstOrThrow();
  expect(Number(sum.sum)).toBe(await readCredits(db, userId));
  const tasks = await db.$kysely
    .selectFrom("tasks")
    .select("id")
    .where("user_id", "=", userId)
    .where("status", "in", [TaskStatus.Completed, TaskStatus.Failed])
    .execute();
  for (const { id } of tasks) {
    const rows = await db.$kysely.selectFrom("ledger_entries").select(["kind", "amount"]).where("task_id", "=", id).execute();
    const amount = (kind: string) => rows.filter((r) => r.kind === kind).reduce((a, r) => a + r.amount, 0);
    expect(rows.filter((r) => r.kind === "charge")).toHaveLength(1);
    expect(amount("reserve")).toBe(amount("charge") + amount("refund"));
  }
}
