import { loadConfig, type Config } from "@gen/config";
import { createDatabase, ensureUser, findTask, readDelivery, type Task } from "@gen/db";
import { newTaskId, newUserId } from "@gen/ids";
import { createLogger } from "@gen/logger";
import { QUEUE_NAMES, createQueue, createRedis, type WebhookJobData } from "@gen/queues";
import { enqueueWebhookAttempt } from "@gen/webhook-delivery";
import { taskObject } from "@gen/task-render";
import { createWebhookSender, type WebhookSender } from "@gen/webhook-sender";
import { fakeResolver } from "../../../../../packages/webhook-sender/test/helpers/fake-resolver.ts";
import { createTestCa, issueServerCert, type KeyPair } from "../../../../../packages/webhook-sender/test/helpers/test-pki.ts";
import type { DeliveryDeps } from "../../../src/delivery/delivery-deps.ts";
import { createWorkerCaps } from "../../../src/delivery/delivery-cap.ts";
import { createDeliveryWorker, type DeliveryWorker, type DeliveryWorkerOptions } from "../../../src/delivery/index.ts";
import { renderTaskBody } from "../../../src/delivery/render-body.ts";
import { deleteKeysUnder } from "../../../../../test/support/redis-keys.ts";
import { testPrefix } from "../../../../../test/support/run-scope.ts";
import { findRows, insertRow, readRow, type RowOf } from "../../../../../test/support/db-rows.ts";

/** The receiver's name; the injected resolver maps it to 127.0.0.1, the only allowed address. */
export const HOST = "hooks.test.example";
/** Resolves to 127.0.0.2, which the allow list leaves blocked (nothing is ever sent there). */
export const BLOCKED_HOST = "blocked.test.example";

export interface FixtureOptions {
  timeoutMs: number;
  retryDelayMs: number;
  finalAttemptMs: number;
  jobLockMs?: number;
  /** WEBHOOK_HOST_CONCURRENCY; defaults to the configuration's default. */
  hostConcurrency?: number;
  /** WEBHOOK_CUSTOMER_CONCURRENCY; defaults to the configuration's default. */
  customerConcurrency?: number;
  /** Defaults to the run's database (DATABASE_URL). */
  databaseUrl?: string;
}

export interface TaskOptions {
  status?: "completed" | "failed";
  url: string;
  /** Defaults to now. */
  finishedAt?: Date;
}

export type DeliveryFixture = Awaited<ReturnType<typeof createDeliveryFixture>>;

/**
 * One test file's world: the run's PostgreSQL, the shared Redis under a QUEUE_PREFIX of its own,
 * a test CA and certificates, and a sender that resolves test names to loopback and trusts only
 * that CA.
 */
export async function createDeliveryFixture(options: FixtureOptions) {
  const queuePrefix = testPrefix("test_dlv");
  const config: Config = loadConfig({
    DATABASE_URL: options.databaseUrl ?? process.env.DATABASE_URL,
    QUEUE_PREFIX: queuePrefix,
    WEBHOOK_TIMEOUT_MS: String(options.timeoutMs),
    WEBHOOK_RETRY_DELAY_MS: String(options.retryDelayMs),
    WEBHOOK_FINAL_ATTEMPT_MS: String(options.finalAttemptMs),
    // The reconciler is run by the tests themselves; the shortest interval lets short schedules pass the config's recovery check.
    RECONCILE_INTERVAL_MS: "100",
    WEBHOOK_ALLOWED_CIDRS: "127.0.0.1/32",
    JOB_LOCK_MS: String(options.jobLockMs ?? 30_000),
    LOG_LEVEL: "silent",
    ...(options.hostConcurrency === undefined ? {} : { WEBHOOK_HOST_CONCURRENCY: String(options.hostConcurrency) }),
    ...(options.customerConcurrency === undefined ? {} : { WEBHOOK_CUSTOMER_CONCURRENCY: String(options.customerConcurrency) }),
  });
  const db = createDatabase(config.databaseUrl);
  const redis = createRedis(config.redisUrl, "blocking");
  const queue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, redis, queuePrefix);
  const logger = createLogger("worker-test", "silent");
  const ca: KeyPair = await createTestCa("Delivery Test CA");
  const cert = await issueServerCert([HOST], { ca });
  const lookup = fakeResolver((hostname) => (hostname === HOST ? ["127.0.0.1"] : hostname === BLOCKED_HOST ? ["127.0.0.2"] : { code: "ENOTFOUND" }));
  const sender: WebhookSender = createWebhookSender({ timeoutMs: config.webhookTimeoutMs, allowedCidrs: config.webhookAllowedCidrs, lookup, ca: ca.cert });
  const userId = newUserId();
  await ensureUser(db, userId);
  const workers: DeliveryWorker[] = [];

  return {
    config,
    db,
    redis,
    /** The owner of every task the fixture makes: the customer their receivers' tickets count under. */
    userId,
    queue,
    logger,
    ca,
    cert,
    lookup,
    sender,
    queuePrefix,

    /** A delivery worker as main.ts would run it, with the test sender. */
    startWorker(overrides: Partial<DeliveryWorkerOptions> = {}): DeliveryWorker {
      const worker = createDeliveryWorker({ config, db, redis, logger, sender, ...overrides });
      workers.push(worker);
      return worker;
    },

    /** The caps the fixture's workers count attempts under (a test holds or inspects places through it). */
    caps: () => createWorkerCaps(redis, config),

    /** What createDeliveryWorker gives its attempts. */
    deliveryDeps(overrides: Partial<DeliveryDeps> = {}): DeliveryDeps {
      const caps = createWorkerCaps(redis, config);
      return { config, db, logger, webhookQueue: queue, sender, render: renderTaskBody, now: () => new Date(), caps, ...overrides };
    },

    /** A terminal task with a `pending` delivery, as the generation worker leaves it before the hand-off. */
    async createTask(task: TaskOptions): Promise<string> {
      const id = newTaskId();
      const failed = task.status === "failed";
      await insertRow(db, "tasks", {
        id,
        userId,
        endpoint: "images",
        model: "sim-image-1",
        status: failed ? "failed" : "completed",
        input: { prompt: "a lighthouse" },
        output: failed ? undefined : { image_urls: [`https://cdn.test.example/tasks/${id}/0.png`] },
        errorCode: failed ? 80003 : null,
        errorMessage: failed ? "Upstream returned a terminal failure" : null,
        webhookUrl: task.url,
        requestId: "req_000000000000000000000000",
        billingMethod: "flat",
        reservedCredits: 4,
        chargedCredits: failed ? 0 : 4,
        refundedCredits: failed ? 4 : 0,
        startedAt: new Date(Date.now() - 1_000),
        finishedAt: task.finishedAt ?? new Date(),
      });
      await insertRow(db, "webhook_deliveries", { taskId: id, url: task.url, status: "pending" });
      return id;
    },

    /** What the generation worker does right after the terminal commit. */
    handOff: (taskId: string) => enqueueWebhookAttempt(queue, taskId, 1, 0),

    task: async (taskId: string): Promise<Task> => (await findTask(db, taskId))!,
    delivery: (taskId: string): Promise<RowOf<"webhook_deliveries">> => readRow(db, "webhook_deliveries", { taskId }),
    attempts: (taskId: string): Promise<RowOf<"webhook_attempts">[]> => findRows(db, "webhook_attempts", { taskId }, "attemptNo"),

    /** The `webhook` object of `GET /api/v1/tasks/{id}?include=webhook`, rendered as the gateway does. */
    async webhookObject(taskId: string): Promise<Record<string, unknown>> {
      const [task, delivery] = await Promise.all([findTask(db, taskId), readDelivery(db, taskId)]);
      return JSON.parse(JSON.stringify(taskObject(task!, { webhook: delivery }).webhook)) as Record<string, unknown>;
    },

    /** Polls until `check` returns a value other than undefined/false. */
    async waitFor<T>(check: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await check();
        if (value !== undefined && value !== false) return value;
        if (Date.now() > deadline) throw new Error("condition not met in time");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },

    async stopWorkers(): Promise<void> {
      await Promise.all(workers.splice(0).map((worker) => worker.close()));
    },

    async close(): Promise<void> {
      await Promise.all(workers.splice(0).map((worker) => worker.close()));
      sender.close();
      await queue.close();
      // Jobs, tickets, leases: everything under the prefix.
      await deleteKeysUnder(redis, queuePrefix);
      redis.disconnect();
      await db.$disconnect();
    },
  };
}

/** The receiver URL for a port; the query carries a caller secret, as the contract suggests. */
export const hookUrl = (port: number, host = HOST) => `https://${host}:${port}/hooks/gen?secret=s3cr%2Ft`;

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
