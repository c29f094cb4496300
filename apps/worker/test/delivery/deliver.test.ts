import type { Logger } from "@gen/logger";
import { createMetrics, renderMetrics } from "@gen/metrics";
import { renderTask } from "@gen/task-render";
import { webhookJobId } from "@gen/queues";
import { headerNames } from "../../../../packages/webhook-sender/test/helpers/senders.ts";
import { createDeliveryFixture, hookUrl, ISO_MS, HOST, type DeliveryFixture } from "./helpers/delivery-fixture.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./helpers/webhook-receiver.ts";
import { countRows, updateRows } from "../../../../test/support/db-rows.ts";

let fx: DeliveryFixture;
let receiver: WebhookReceiver;
const metrics = createMetrics({ defaultMetrics: false });
// Every line the worker logs, at every level, to check what each names.
const lines: { message: string; fields: Record<string, unknown> }[] = [];
const record = (message: string, fields: Record<string, unknown> = {}) => void lines.push({ message, fields });
const logger = { info: record, debug: record, warn: record, error: record, child: () => logger } as unknown as Logger;

beforeAll(async () => {
  fx = await createDeliveryFixture({ timeoutMs: 2_000, retryDelayMs: 400, finalAttemptMs: 6_600 });
  receiver = await startWebhookReceiver(fx.cert);
  fx.startWorker({ metrics, logger });
});
afterAll(async () => {
  await fx.close();
  await receiver.close();
});

function requestsFor(taskId: string) {
  return receiver.requests.filter((request) => (JSON.parse(request.body.toString("utf8")) as { id: string }).id === taskId);
}

test("a completed task is POSTed once, at once, with the default GET body and only our headers", async () => {
  const url = hookUrl(receiver.port);
  const taskId = await fx.createTask({ url });
  expect(await fx.webhookObject(taskId)).toEqual({
    status: "pending",
    attempts: 0,
    response_status: null,
    last_error: null,
    last_attempt_at: null,
    delivered_at: null,
  });

  const handedOffAt = Date.now();
  await fx.handOff(taskId);
  const delivery = await fx.waitFor(async () => {
    const row = await fx.delivery(taskId);
    return row.status === "delivered" && row;
  });

  const requests = requestsFor(taskId);
  expect(requests).toHaveLength(1);
  const request = requests[0]!;
  expect(request.method).toBe("POST");
  expect(request.url).toBe("/hooks/gen?secret=s3cr%2Ft");
  expect(request.body.toString("utf8")).toBe(renderTask(await fx.task(taskId)));
  const headers = request.rawHeaders;
  expect(headers[headers.findIndex((name) => name.toLowerCase() === "content-type") + 1]).toBe("application/json");
  expect(headers[headers.findIndex((name) => name.toLowerCase() === "user-agent") + 1]).toBe("service-Webhook/1");
  // Nothing service-specific: no account data, no credentials, no signature.
  expect(
    headerNames(headers)
      .map((name) => name.toLowerCase())
      .sort(),
  ).toEqual(["connection", "content-length", "content-type", "host", "user-agent"]);
  expect(headers[headers.findIndex((name) => name.toLowerCase() === "host") + 1]).toBe(`${HOST}:${receiver.port}`);

  const webhook = await fx.webhookObject(taskId);
  expect(webhook).toEqual({
    status: "delivered",
    attempts: 1,
    response_status: 200,
    last_error: null,
    last_attempt_at: expect.stringMatching(ISO_MS),
    delivered_at: expect.stringMatching(ISO_MS),
  });
  expect(delivery.lastAttemptAt!.getTime()).toBeGreaterThanOrEqual(handedOffAt - 5);
  expect(delivery.deliveredAt!.getTime()).toBeGreaterThanOrEqual(delivery.lastAttemptAt!.getTime());
  expect(delivery.nextAttemptAt).toBeNull();

  const attempts = await fx.attempts(taskId);
  expect(attempts).toHaveLength(1);
  expect(attempts[0]).toMatchObject({
    attemptNo: 1,
    outcome: "delivered",
    responseStatus: 200,
    startedAt: delivery.lastAttemptAt,
    finishedAt: delivery.deliveredAt,
  });
  expect(attempts[0]!.id).toMatch(/^whd_[0-9a-f]{24}$/);
  expect(attempts[0]!.durationMs).toBe(delivery.deliveredAt!.getTime() - delivery.lastAttemptAt!.getTime());
});

test("a failed task carries the attempt's whd_ id as error.request_id, and nothing else differs from GET", async () => {
  const taskId = await fx.createTask({ url: hookUrl(receiver.port), status: "failed" });
  await fx.handOff(taskId);
  await fx.waitFor(async () => (await fx.delivery(taskId)).status === "delivered");

  const [attempt] = await fx.attempts(taskId);
  const request = requestsFor(taskId)[0]!;
  const task = await fx.task(taskId);
  expect(request.body.toString("utf8")).toBe(renderTask(task, { deliveryId: attempt!.id }));
  const body = JSON.parse(request.body.toString("utf8")) as Record<string, unknown>;
  expect(Object.keys(body)).toEqual(["id", "model", "status", "created_at", "output", "usage", "error"]);
  expect(body).toMatchObject({
    status: "failed",
    output: null,
    usage: { credits: 0 },
    error: { code: 80003, message: "Upstream returned a terminal failure", request_id: attempt!.id },
  });
  // Without request_id the body is the polling body byte for byte.
  delete (body.error as Record<string, unknown>).request_id;
  expect(JSON.stringify(body)).toBe(renderTask(task));
});

test("any output survives the trip byte for byte (nested objects, numbers, unicode)", async () => {
  const taskId = await fx.createTask({ url: hookUrl(receiver.port) });
  const output = {
    flagged: true,
    categories: { violence: true, "self-harm": false },
    category_scores: { violence: 0.9132, "self-harm": 1e-7, big: 12345678901234 },
    text: 'é ü \u2028 🚀 "q"',
    list: [1, [2, { z: null }]],
  };
  await updateRows(fx.db, "tasks", { id: taskId }, { endpoint: "moderations", output });
  await fx.handOff(taskId);
  await fx.waitFor(async () => (await fx.delivery(taskId)).status === "delivered");
  expect(requestsFor(taskId)[0]!.body.toString("utf8")).toBe(renderTask(await fx.task(taskId)));
});

test("the task row is never written by a delivery", async () => {
  const taskId = await fx.createTask({ url: hookUrl(receiver.port) });
  const before = await fx.task(taskId);
  await fx.handOff(taskId);
  await fx.waitFor(async () => (await fx.delivery(taskId)).status === "delivered");
  expect(await fx.task(taskId)).toEqual(before);
});

test("a duplicate job for an attempt that already ran sends nothing", async () => {
  const taskId = await fx.createTask({ url: hookUrl(receiver.port) });
  await fx.handOff(taskId);
  await fx.handOff(taskId);
  await fx.waitFor(async () => (await fx.delivery(taskId)).status === "delivered");
  const delivered = await fx.delivery(taskId);

  // BullMQ may deliver a job again (the same id once the first run is gone, say): it must be a no-op.
  await fx.queue.remove(webhookJobId(taskId, 1));
  await fx.handOff(taskId);
  await fx.waitFor(async () => (await fx.queue.getJobState(webhookJobId(taskId, 1))) === "completed");
  // Stray jobs for attempts that are not due are no-ops as well.
  await fx.queue.add("deliver", { taskId, attempt: 3 }, { jobId: webhookJobId(taskId, 3) });
  await fx.waitFor(async () => (await fx.queue.getJobState(webhookJobId(taskId, 3))) === "completed");

  expect(requestsFor(taskId)).toHaveLength(1);
  expect(await fx.delivery(taskId)).toEqual(delivered);
  expect(await fx.attempts(taskId)).toHaveLength(1);
});

test("a delivery whose task is not terminal yet is left alone", async () => {
  const taskId = await fx.createTask({ url: hookUrl(receiver.port) });
  await updateRows(fx.db, "tasks", { id: taskId }, { status: "in_progress", finishedAt: null });
  await fx.handOff(taskId);
  await fx.waitFor(async () => (await fx.queue.getJobState(webhookJobId(taskId, 1))) === "completed");
  expect(requestsFor(taskId)).toHaveLength(0);
  expect(await fx.webhookObject(taskId)).toMatchObject({ status: "pending", attempts: 0 });
});

test("deliveries to many tasks run concurrently", async () => {
  const ids = await Promise.all(Array.from({ length: 40 }, () => fx.createTask({ url: hookUrl(receiver.port) })));
  await Promise.all(ids.map((id) => fx.handOff(id)));
  await fx.waitFor(async () => (await countRows(fx.db, "webhook_deliveries", { taskId: ids, status: "delivered" })) === ids.length);
  for (const id of ids) expect(requestsFor(id)).toHaveLength(1);
});

test("an attempt's log line names the task and the request id of its submission", async () => {
  const taskId = await fx.createTask({ url: hookUrl(receiver.port) });
  await fx.handOff(taskId);
  await fx.waitFor(async () => (await fx.delivery(taskId)).status === "delivered");
  const line = lines.find((entry) => entry.message === "webhook delivered" && entry.fields.task_id === taskId);
  expect(line?.fields).toMatchObject({ task_id: taskId, request_id: (await fx.task(taskId)).requestId, outcome: "delivered" });
  expect(line?.fields.request_id).toEqual(expect.stringMatching(/^req_/));
});

test("recorded attempts are counted in the worker's metrics", async () => {
  const taskId = await fx.createTask({ url: hookUrl(receiver.port) });
  await fx.handOff(taskId);
  await fx.waitFor(async () => (await fx.delivery(taskId)).status === "delivered");
  const { body } = await renderMetrics(metrics);
  const delivered = Number(/^webhook_attempts_total\{outcome="delivered"\} (\d+)$/m.exec(body)?.[1]);
  // Every POST this file's receiver got was answered 200 and recorded by this worker.
  expect(delivered).toBe(receiver.requests.length);
  expect(body).toMatch(/^webhook_dispatch_seconds_count [1-9]\d*$/m);
});
