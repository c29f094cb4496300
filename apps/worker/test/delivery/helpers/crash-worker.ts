// Child-process entry for the attempt_lost test: a delivery worker the test can SIGKILL mid-attempt.
// Usage: node --conditions=@gen/source --import tsx crash-worker.ts, with the fixture's settings in the environment
// (QUEUE_PREFIX, WEBHOOK_*, JOB_LOCK_MS) and TEST_CA_PEM. Prints "ready" once it consumes jobs.
import { loadConfig } from "@gen/config";
import { createDatabase } from "@gen/db";
import { createLogger } from "@gen/logger";
import { createRedis } from "@gen/queues";
import { createWebhookSender } from "@gen/webhook-sender";
import { resolverFor } from "../../../../../packages/webhook-sender/test/helpers/fake-resolver.ts";
import { createDeliveryWorker } from "../../../src/delivery/index.ts";
import { HOST } from "./delivery-fixture.ts";

const config = loadConfig({ ...process.env, LOG_LEVEL: "silent" });
const db = createDatabase(config.databaseUrl);
const redis = createRedis(config.redisUrl, "blocking");
const sender = createWebhookSender({
  timeoutMs: config.webhookTimeoutMs,
  allowedCidrs: config.webhookAllowedCidrs,
  lookup: resolverFor(HOST, ["127.0.0.1"]),
  ca: process.env.TEST_CA_PEM,
});
const { worker } = createDeliveryWorker({ config, db, redis, logger: createLogger("crash-worker", "silent"), sender });
await worker.waitUntilReady();
process.stdout.write("ready\n");
