import { newDeliveryId } from "@gen/ids";
import { enqueueWebhookAttempt } from "@gen/webhook-delivery";
import { createDeliveryFixture, hookUrl, ISO_MS, type DeliveryFixture } from "./helpers/delivery-fixture.ts";
import { startWebhookReceiver, type Respond, type WebhookReceiver } from "./helpers/webhook-receiver.ts";
import type { RenderBody } from "../../src/delivery/index.ts";
import { renderTaskBody } from "../../src/delivery/render-body.ts";
import { insertRow, updateRows } from "../../../../test/support/db-rows.ts";

// Shortened schedule: attempt 2 400 ms after attempt 1 failed, attempt 3 1.5 s after the task finished.
const RETRY_MS = 400;
const FINAL_MS = 3_200;
// Generous: BullMQ delayed jobs are usually within a few ms, but CI machines stall.
const LATE_MS = 1_000;
const EARLY_MS = 5;

let fx: DeliveryFixture;
const receivers: WebhookReceiver[] = [];
const renderOverrides = new Map<string, RenderBody>();

beforeAll(async () => {
  fx = await createDeliveryFixture({ timeoutMs: 300, retryDelayMs: RETRY_MS, finalAttemptMs: FINAL_MS });
  fx.startWorker({ render: (task, deliveryId) => (renderOverrides.get(task.id) ?? renderTaskBody)(task, deliveryId) });
});
afterAll(async () => {
  await fx.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

async function receiver(respond: Respond) {
  const started = await startWebhookReceiver(fx.cert, respond);
  receivers.push(started);
  return started;
}

const attemptFinished = (taskId: string, attemptNo: number) =>
  fx.waitFor(async () => {
    const attempt = (await fx.attempts(taskId))[attemptNo - 1];
    return attempt?.finishedAt != null && attempt;
  });

test("three failed attempts: at once, retry delay after the failure, final delay after the task finished; then failed", async () => {
  const hook = await receiver(() => 500);
  const taskId = await fx.createTask({ url: hookUrl(hook.port) });
  const finishedAt = (await fx.task(taskId)).finishedAt!.getTime();
  await fx.handOff(taskId);

  const first = await attemptFinished(taskId, 1);
  expect(hook.arrivals[0]! - finishedAt).toBeLessThan(LATE_MS);
  const afterFirst = await fx.webhookObject(taskId);
  expect(afterFirst).toEqual({
    status: "in_progress",
    attempts: 1,
    response_status: 500,
    last_error: "http_500",
    last_attempt_at: first.startedAt.toISOString(),
    delivered_at: null,
  });

  const second = await attemptFinished(taskId, 2);
  const secondDelay = hook.arrivals[1]! - first.finishedAt!.getTime();
  expect(secondDelay).toBeGreaterThanOrEqual(RETRY_MS - EARLY_MS);
  expect(secondDelay).toBeLessThan(RETRY_MS + LATE_MS);
  expect(second.startedAt.getTime() - first.finishedAt!.getTime()).toBeGreaterThanOrEqual(RETRY_MS - EARLY_MS);
  expect(await fx.webhookObject(taskId)).toEqual({
    status: "in_progress",
    attempts: 2,
    response_status: 500,
    last_error: "http_500",
    last_attempt_at: second.startedAt.toISOString(),
    delivered_at: null,
  });
  expect((await fx.delivery(taskId)).nextAttemptAt!.getTime()).toBe(finishedAt + FINAL_MS);

  const third = await attemptFinished(taskId, 3);
  const thirdDelay = hook.arrivals[2]! - finishedAt;
  expect(thirdDelay).toBeGreaterThanOrEqual(FINAL_MS - EARLY_MS);
  expect(thirdDelay).toBeLessThan(FINAL_MS + LATE_MS);
  const webhook = await fx.webhookObject(taskId);
  expect(webhook).toEqual({
    status: "failed",
    attempts: 3,
    response_status: 500,
    last_error: "http_500",
    last_attempt_at: third.startedAt.toISOString(),
    delivered_at: null,
  });
  expect(webhook.last_attempt_at).toMatch(ISO_MS);
  expect((await fx.delivery(taskId)).nextAttemptAt).toBeNull();

  // Nothing more is sent.
  await new Promise((resolve) => setTimeout(resolve, RETRY_MS * 2));
  expect(hook.arrivals).toHaveLength(3);
  expect((await fx.attempts(taskId)).map((attempt) => [attempt.attemptNo, attempt.outcome])).toEqual([
    [1, "http_500"],
    [2, "http_500"],
    [3, "http_500"],
  ]);
});

test("the webhook object while an attempt runs, between attempts, and once delivered on attempt 3", async () => {
  const hook = await receiver((index) => (index === 0 ? "hang" : index === 1 ? 503 : 204));
  const taskId = await fx.createTask({ url: hookUrl(hook.port) });
  const finishedAt = (await fx.task(taskId)).finishedAt!.getTime();
  expect(await fx.webhookObject(taskId)).toEqual({
    status: "pending",
    attempts: 0,
    response_status: null,
    last_error: null,
    last_attempt_at: null,
    delivered_at: null,
  });
  await fx.handOff(taskId);

  await hook.waitForRequests(1);
  const running = await fx.webhookObject(taskId);
  expect(running).toEqual({
    status: "in_progress",
    attempts: 1,
    response_status: null,
    last_error: null,
    last_attempt_at: expect.stringMatching(ISO_MS),
    delivered_at: null,
  });

  await attemptFinished(taskId, 1);
  expect(await fx.webhookObject(taskId)).toMatchObject({ status: "in_progress", attempts: 1, response_status: null, last_error: "timeout" });
  await attemptFinished(taskId, 2);
  expect(await fx.webhookObject(taskId)).toMatchObject({ status: "in_progress", attempts: 2, response_status: 503, last_error: "http_503" });

  const third = await attemptFinished(taskId, 3);
  expect(hook.arrivals[2]! - finishedAt).toBeGreaterThanOrEqual(FINAL_MS - EARLY_MS);
  expect(hook.arrivals[2]! - finishedAt).toBeLessThan(FINAL_MS + LATE_MS);
  expect(await fx.webhookObject(taskId)).toEqual({
    status: "delivered",
    attempts: 3,
    response_status: 204,
    last_error: null,
    last_attempt_at: third.startedAt.toISOString(),
    delivered_at: third.finishedAt!.toISOString(),
  });
});

test("delivered on attempt 2 stops the schedule", async () => {
  const hook = await receiver((index) => (index === 0 ? 502 : 200));
  const taskId = await fx.createTask({ url: hookUrl(hook.port) });
  await fx.handOff(taskId);
  const second = await attemptFinished(taskId, 2);
  expect(await fx.webhookObject(taskId)).toEqual({
    status: "delivered",
    attempts: 2,
    response_status: 200,
    last_error: null,
    last_attempt_at: second.startedAt.toISOString(),
    delivered_at: second.finishedAt!.toISOString(),
  });
  await new Promise((resolve) => setTimeout(resolve, FINAL_MS + 300));
  expect(hook.arrivals).toHaveLength(2);
  expect(await fx.attempts(taskId)).toHaveLength(2);
});

test("attempt 3 goes at once when attempt 2 fails after the final attempt time", async () => {
  const hook = await receiver(() => 500);
  const taskId = await fx.createTask({ url: hookUrl(hook.port) });
  const finishedAt = (await fx.task(taskId)).finishedAt!.getTime();
  // Attempts 1 and 2 each take 1.5 s to build their body: attempt 2 starts in time (its window is
  // open) but fails after finished + FINAL_MS.
  let calls = 0;
  renderOverrides.set(taskId, async (task, deliveryId) => {
    calls += 1;
    if (calls <= 2) await new Promise((resolve) => setTimeout(resolve, 1_500));
    return renderTaskBody(task, deliveryId);
  });
  await fx.handOff(taskId);

  const second = await attemptFinished(taskId, 2);
  expect(second.finishedAt!.getTime()).toBeGreaterThan(finishedAt + FINAL_MS);
  const third = await attemptFinished(taskId, 3);
  expect(third.startedAt.getTime() - second.finishedAt!.getTime()).toBeLessThan(LATE_MS);
  const gap = hook.arrivals[2]! - second.finishedAt!.getTime();
  expect(gap).toBeGreaterThanOrEqual(0);
  expect(gap).toBeLessThan(LATE_MS);
  expect(await fx.webhookObject(taskId)).toMatchObject({ status: "failed", attempts: 3, last_error: "http_500" });
});

test("a job that arrives well before its attempt is due is put back until then", async () => {
  const hook = await receiver(() => 200);
  const taskId = await fx.createTask({ url: hookUrl(hook.port) });
  // Far enough ahead to tell "at once" from "at due", early enough for its window (finished + FINAL_MS).
  const due = new Date(Date.now() + 700);
  await insertRow(fx.db, "webhook_attempts", {
    id: newDeliveryId(),
    taskId,
    attemptNo: 1,
    startedAt: new Date(),
    finishedAt: new Date(),
    outcome: "http_500",
    responseStatus: 500,
    durationMs: 0,
  });
  await updateRows(
    fx.db,
    "webhook_deliveries",
    { taskId },
    { status: "in_progress", attempts: 1, responseStatus: 500, lastError: "http_500", lastAttemptAt: new Date(), nextAttemptAt: due },
  );
  // Say an operator re-enqueued attempt 2 by hand, without a delay.
  await enqueueWebhookAttempt(fx.queue, taskId, 2, 0);

  await hook.waitForRequests(1);
  expect(hook.arrivals[0]!).toBeGreaterThanOrEqual(due.getTime() - 250);
  expect(hook.arrivals[0]! - due.getTime()).toBeLessThan(LATE_MS);
  await fx.waitFor(async () => (await fx.delivery(taskId)).status === "delivered");
  expect(await fx.attempts(taskId)).toHaveLength(2);
});
