import { newDeliveryId } from "@gen/ids";
import { claimAttempt, enqueueWebhookAttempt } from "@gen/webhook-delivery";
import { createDeliveryFixture, hookUrl, type DeliveryFixture } from "./helpers/delivery-fixture.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./helpers/webhook-receiver.ts";
import { insertRows, updateRows } from "../../../../test/support/db-rows.ts";

const RETRY_MS = 400;
const FINAL_MS = 3_200;
let fx: DeliveryFixture;
let receiver: WebhookReceiver;

beforeAll(async () => {
  fx = await createDeliveryFixture({ timeoutMs: 300, retryDelayMs: RETRY_MS, finalAttemptMs: FINAL_MS });
  receiver = await startWebhookReceiver(fx.cert);
  fx.startWorker();
});
afterAll(async () => {
  await fx.close();
  await receiver.close();
});

const requestsFor = (taskId: string) => receiver.requests.filter((request) => request.body.toString("utf8").includes(taskId));

test("attempts claimed too late for their window are stale_claim and not sent; attempt 3 then goes at once", async () => {
  // The task finished long before the worker got to it (a backlog, a worker fleet that was down).
  const taskId = await fx.createTask({ url: hookUrl(receiver.port), finishedAt: new Date(Date.now() - FINAL_MS - 10_000) });
  await fx.handOff(taskId);
  const attempts = await fx.waitFor(async () => {
    const rows = await fx.attempts(taskId);
    return rows.length === 3 && rows[2]!.finishedAt !== null && rows;
  });

  expect(attempts.map((attempt) => attempt.outcome)).toEqual(["stale_claim", "stale_claim", "delivered"]);
  expect(attempts[0]!.durationMs).toBeLessThan(1_000);
  // Attempt 2 still follows the schedule (retry delay after attempt 1's failure) ...
  expect(attempts[1]!.startedAt.getTime() - attempts[0]!.finishedAt!.getTime()).toBeGreaterThanOrEqual(RETRY_MS - 5);
  // ... and attempt 3, past its time already, goes at once after attempt 2.
  expect(attempts[2]!.startedAt.getTime() - attempts[1]!.finishedAt!.getTime()).toBeLessThan(1_000);
  expect(requestsFor(taskId)).toHaveLength(1);
  expect(JSON.parse(requestsFor(taskId)[0]!.body.toString("utf8"))).toMatchObject({ id: taskId, status: "completed" });
  expect(await fx.webhookObject(taskId)).toMatchObject({ status: "delivered", attempts: 3, response_status: 200, last_error: null });
});

test("attempt 3 claimed more than 60 s after it was due is stale_claim, and the delivery is failed", async () => {
  const taskId = await fx.createTask({ url: hookUrl(receiver.port), finishedAt: new Date(Date.now() - 120_000) });
  const due = new Date(Date.now() - 61_000);
  await insertRows(fx.db, "webhook_attempts", [
    {
      id: newDeliveryId(),
      taskId,
      attemptNo: 1,
      startedAt: new Date(Date.now() - 119_000),
      finishedAt: new Date(Date.now() - 118_000),
      outcome: "http_500",
      responseStatus: 500,
      durationMs: 1000,
    },
    {
      id: newDeliveryId(),
      taskId,
      attemptNo: 2,
      startedAt: new Date(Date.now() - 78_000),
      finishedAt: new Date(Date.now() - 77_000),
      outcome: "http_500",
      responseStatus: 500,
      durationMs: 1000,
    },
  ]);
  await updateRows(
    fx.db,
    "webhook_deliveries",
    { taskId },
    { status: "in_progress", attempts: 2, responseStatus: 500, lastError: "http_500", lastAttemptAt: new Date(Date.now() - 78_000), nextAttemptAt: due },
  );
  await enqueueWebhookAttempt(fx.queue, taskId, 3, 0);

  await fx.waitFor(async () => (await fx.delivery(taskId)).status === "failed");
  expect(requestsFor(taskId)).toHaveLength(0);
  expect(await fx.webhookObject(taskId)).toEqual({
    status: "failed",
    attempts: 3,
    response_status: null,
    last_error: "stale_claim",
    last_attempt_at: expect.any(String),
    delivered_at: null,
  });
  expect((await fx.attempts(taskId)).map((attempt) => attempt.outcome)).toEqual(["http_500", "http_500", "stale_claim"]);
});

test("of two workers claiming the same attempt, exactly one gets it", async () => {
  const taskId = await fx.createTask({ url: hookUrl(receiver.port) });
  const now = new Date();
  const claims = await Promise.all(Array.from({ length: 8 }, () => claimAttempt(fx.db, taskId, 1, now)));
  expect(claims.filter((claim) => claim !== null)).toHaveLength(1);
  const attempts = await fx.attempts(taskId);
  expect(attempts).toHaveLength(1);
  expect(attempts[0]!.id).toBe(claims.find((claim) => claim !== null)!.id);
  expect(await fx.webhookObject(taskId)).toEqual({
    status: "in_progress",
    attempts: 1,
    response_status: null,
    last_error: null,
    last_attempt_at: now.toISOString(),
    delivered_at: null,
  });
  // Attempt 2 cannot be claimed while attempt 1 is open.
  expect(await claimAttempt(fx.db, taskId, 2, new Date())).toBeNull();
});
