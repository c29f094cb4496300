import { newDeliveryId } from "@gen/ids";
import { webhookJobId } from "@gen/queues";
import { renderTask } from "@gen/task-render";
import { enqueueWebhookAttempt, requestRedelivery } from "@gen/webhook-delivery";
import { createDeliveryFixture, hookUrl, ISO_MS, type DeliveryFixture } from "./helpers/delivery-fixture.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./helpers/webhook-receiver.ts";
import { deleteRows, insertRow, updateRows } from "../../../../test/support/db-rows.ts";

const RETRY_MS = 200;
const FINAL_MS = 4_400;
let fx: DeliveryFixture;
let receiver: WebhookReceiver;
// What the receiver answers next; tests in a file run one after the other.
let answer = 200;

beforeAll(async () => {
  fx = await createDeliveryFixture({ timeoutMs: 1_000, retryDelayMs: RETRY_MS, finalAttemptMs: FINAL_MS });
  receiver = await startWebhookReceiver(fx.cert, () => answer);
  fx.startWorker();
});
afterAll(async () => {
  await fx.close();
  await receiver.close();
});

const redeliver = (taskId: string, operator = "alice", now?: Date) => requestRedelivery({ db: fx.db, webhookQueue: fx.queue }, taskId, operator, now);
const postsFor = (taskId: string) => receiver.requests.filter((request) => request.body.toString("utf8").includes(taskId));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function finishedAttempts(taskId: string, count: number) {
  return fx.waitFor(async () => {
    const rows = await fx.attempts(taskId);
    return rows.length === count && rows.every((row) => row.finishedAt !== null) && rows;
  }, 15_000);
}

async function deliveredTask(): Promise<string> {
  answer = 200;
  const taskId = await fx.createTask({ url: hookUrl(receiver.port) });
  await fx.handOff(taskId);
  await fx.waitFor(async () => (await fx.delivery(taskId)).status === "delivered");
  return taskId;
}

test("a failed delivery redelivered by hand: attempt 4, recorded like the others, no retry after a failure, delivered on success", async () => {
  answer = 500;
  const taskId = await fx.createTask({ url: hookUrl(receiver.port), status: "failed" });
  await fx.handOff(taskId);
  await fx.waitFor(async () => (await fx.delivery(taskId)).status === "failed", 15_000);
  // On a loaded machine a scheduled attempt may miss its window (stale_claim, nothing sent).
  const sent = (await fx.attempts(taskId)).filter((attempt) => attempt.responseStatus !== null).length;
  expect(postsFor(taskId)).toHaveLength(sent);

  // Still failing: one more POST, then the delivery is failed again and nothing follows.
  expect(await redeliver(taskId)).toEqual({ ok: true, attempt: 4, enqueued: true });
  // The worker runs beside: by this read attempt 4 may be queued, claimed or even finished.
  const justAfter = await fx.webhookObject(taskId);
  expect([
    { status: "in_progress", attempts: 3 },
    { status: "in_progress", attempts: 4 },
    { status: "failed", attempts: 4 },
  ]).toContainEqual({ status: justAfter.status, attempts: justAfter.attempts });
  const afterFourth = await finishedAttempts(taskId, 4);
  expect(afterFourth[3]).toMatchObject({ attemptNo: 4, outcome: "http_500", responseStatus: 500, requestedBy: "alice" });
  expect(await fx.webhookObject(taskId)).toMatchObject({ status: "failed", attempts: 4, response_status: 500, last_error: "http_500", delivered_at: null });
  await sleep(RETRY_MS * 3);
  expect(postsFor(taskId)).toHaveLength(sent + 1);
  expect(await fx.attempts(taskId)).toHaveLength(4);

  answer = 200;
  expect(await redeliver(taskId, "bob")).toEqual({ ok: true, attempt: 5, enqueued: true });
  const attempts = await finishedAttempts(taskId, 5);
  const fifth = attempts[4]!;
  expect(fifth).toMatchObject({ attemptNo: 5, outcome: "delivered", responseStatus: 200, requestedBy: "bob" });
  expect(fifth.id).toMatch(/^whd_[0-9a-f]{24}$/);
  expect(new Set(attempts.map((attempt) => attempt.id)).size).toBe(5);
  expect(attempts.slice(0, 3).every((attempt) => attempt.requestedBy === null)).toBe(true);
  expect(fifth.durationMs).toBe(fifth.finishedAt!.getTime() - fifth.startedAt.getTime());
  expect(await fx.webhookObject(taskId)).toEqual({
    status: "delivered",
    attempts: 5,
    response_status: 200,
    last_error: null,
    last_attempt_at: fifth.startedAt.toISOString(),
    delivered_at: fifth.finishedAt!.toISOString(),
  });
  // The same body as every other attempt: the task, with this attempt's whd_ id as error.request_id.
  const posts = postsFor(taskId);
  expect(posts).toHaveLength(sent + 2);
  expect(posts[sent + 1]!.body.toString("utf8")).toBe(renderTask(await fx.task(taskId), { deliveryId: fifth.id }));
  const delivery = await fx.delivery(taskId);
  expect(delivery.redeliveryRequestedBy).toBeNull();
  expect(delivery.nextAttemptAt).toBeNull();
}, 30_000);

test("a delivered webhook sent again: new attempts in the log, while the API's webhook object stays as the first 2xx left it", async () => {
  const taskId = await deliveredTask();
  const [first] = await fx.attempts(taskId);
  // What the API showed once delivered; no redelivery may contradict or move it.
  const delivered = {
    status: "delivered",
    attempts: 1,
    response_status: 200,
    last_error: null,
    last_attempt_at: first!.startedAt.toISOString(),
    delivered_at: first!.finishedAt!.toISOString(),
  };
  expect(await fx.webhookObject(taskId)).toEqual(delivered);

  expect(await redeliver(taskId)).toEqual({ ok: true, attempt: 2, enqueued: true });
  // While the resend is waiting or running the row is in_progress; the API still says delivered (the
  // worker runs beside, so attempt 2 may have finished by this read: delivered again, with 2 attempts).
  const during = await fx.webhookObject(taskId);
  const secondDelivered = { ...delivered, attempts: 2, last_attempt_at: expect.any(String), delivered_at: expect.any(String) };
  expect(during).toEqual(during.attempts === 1 ? delivered : secondDelivered);
  const [, second] = await finishedAttempts(taskId, 2);
  expect(second).toMatchObject({ attemptNo: 2, outcome: "delivered", requestedBy: "alice" });
  expect(await fx.webhookObject(taskId)).toEqual(delivered);

  answer = 503;
  // Attempt 3 by hand is not the schedule's attempt 3: it has its own window and no retry follows.
  expect(await redeliver(taskId)).toEqual({ ok: true, attempt: 3, enqueued: true });
  const [, , third] = await finishedAttempts(taskId, 3);
  expect(third).toMatchObject({ attemptNo: 3, outcome: "http_503", responseStatus: 503 });
  // Never `delivered` next to a later failure's last_error or response_status.
  expect(await fx.webhookObject(taskId)).toEqual(delivered);
  // The row (what the console shows operators) has every attempt.
  expect(await fx.delivery(taskId)).toMatchObject({ status: "delivered", attempts: 3, lastError: "http_503", responseStatus: 503 });
  await sleep(RETRY_MS * 3);
  expect(postsFor(taskId)).toHaveLength(3);
});

test("only a finished delivery can be sent again; unknown tasks and tasks without a webhook are told apart", async () => {
  answer = 200;
  const pending = await fx.createTask({ url: hookUrl(receiver.port) });
  expect(await redeliver(pending)).toEqual({ ok: false, reason: "not_finished", status: "pending" });

  // Waiting for its scheduled attempt 2.
  answer = 500;
  const waiting = await fx.createTask({ url: hookUrl(receiver.port), finishedAt: new Date(Date.now() - 1_000) });
  await updateRows(
    fx.db,
    "webhook_deliveries",
    { taskId: waiting },
    { status: "in_progress", attempts: 1, lastError: "http_500", responseStatus: 500, nextAttemptAt: new Date(Date.now() + 60_000) },
  );
  expect(await redeliver(waiting)).toEqual({ ok: false, reason: "not_finished", status: "in_progress" });
  expect(await fx.webhookObject(waiting)).toMatchObject({ status: "in_progress", attempts: 1 });

  expect(await redeliver("task_00000000000000000000000000000000")).toEqual({ ok: false, reason: "unknown_task" });
  const plain = await fx.createTask({ url: hookUrl(receiver.port) });
  await deleteRows(fx.db, "webhook_deliveries", { taskId: plain });
  await updateRows(fx.db, "tasks", { id: plain }, { webhookUrl: null });
  expect(await redeliver(plain)).toEqual({ ok: false, reason: "no_webhook" });
  expect(postsFor(pending)).toHaveLength(0);
  expect(postsFor(waiting)).toHaveLength(0);
});

test("double clicks and duplicate jobs send once", async () => {
  const taskId = await deliveredTask();
  await fx.stopWorkers();
  const results = await Promise.all([redeliver(taskId), redeliver(taskId), redeliver(taskId)]);
  expect(results.filter((result) => result.ok)).toEqual([{ ok: true, attempt: 2, enqueued: true }]);
  expect(results.filter((result) => !result.ok)).toEqual([
    { ok: false, reason: "not_finished", status: "in_progress" },
    { ok: false, reason: "not_finished", status: "in_progress" },
  ]);
  // The same attempt enqueued again (a retried request, the reconciler) is the same job.
  await enqueueWebhookAttempt(fx.queue, taskId, 2, 0);
  expect(await fx.queue.getJobCounts("waiting")).toMatchObject({ waiting: 1 });

  fx.startWorker();
  await finishedAttempts(taskId, 2);
  // A job BullMQ hands out once more after it ran is a no-op as well.
  await fx.queue.remove(webhookJobId(taskId, 2));
  await enqueueWebhookAttempt(fx.queue, taskId, 2, 0);
  await fx.waitFor(async () => (await fx.queue.getJobState(webhookJobId(taskId, 2))) === "completed");
  // So is a stray job for an attempt nobody asked for.
  await enqueueWebhookAttempt(fx.queue, taskId, 7, 0);
  await fx.waitFor(async () => (await fx.queue.getJobState(webhookJobId(taskId, 7))) === "completed");
  expect(postsFor(taskId)).toHaveLength(2);
  expect(await fx.attempts(taskId)).toHaveLength(2);
});

test("a manual attempt whose worker died before reporting is attempt_lost, not resent, and the delivery keeps its state", async () => {
  const taskId = await deliveredTask();
  const before = await fx.delivery(taskId);
  // What a worker killed mid-attempt leaves: the claim committed, the attempt open.
  const startedAt = new Date(Date.now() - 500);
  const open = await insertRow(fx.db, "webhook_attempts", { id: newDeliveryId(), taskId, attemptNo: 2, startedAt, requestedBy: "alice" });
  await updateRows(fx.db, "webhook_deliveries", { taskId }, { status: "in_progress", attempts: 2, lastAttemptAt: startedAt, redeliveryRequestedBy: "alice" });
  // BullMQ hands the stalled job to another worker.
  await enqueueWebhookAttempt(fx.queue, taskId, 2, 0);

  const [first, lost] = await finishedAttempts(taskId, 2);
  expect(lost).toMatchObject({ id: open.id, outcome: "attempt_lost", responseStatus: null, requestedBy: "alice" });
  expect(await fx.webhookObject(taskId)).toEqual({
    status: "delivered",
    attempts: 1,
    response_status: 200,
    last_error: null,
    last_attempt_at: first!.startedAt.toISOString(),
    delivered_at: before.deliveredAt!.toISOString(),
  });
  expect((await fx.delivery(taskId)).redeliveryRequestedBy).toBeNull();
  await sleep(RETRY_MS * 3);
  expect(postsFor(taskId)).toHaveLength(1);
});

test("a manual request picked up more than its window late is stale_claim, and nothing is sent", async () => {
  answer = 500;
  const taskId = await fx.createTask({ url: hookUrl(receiver.port), finishedAt: new Date(Date.now() - 600_000) });
  await updateRows(
    fx.db,
    "webhook_deliveries",
    { taskId },
    { status: "failed", attempts: 3, lastError: "http_500", responseStatus: 500, lastAttemptAt: new Date(Date.now() - 300_000) },
  );
  // Requested 61 s ago: the job was stuck behind a backlog until now.
  expect(await redeliver(taskId, "alice", new Date(Date.now() - 61_000))).toMatchObject({ ok: true, attempt: 4 });
  const attempts = await finishedAttempts(taskId, 1);
  expect(attempts[0]).toMatchObject({ attemptNo: 4, outcome: "stale_claim", requestedBy: "alice" });
  expect(await fx.webhookObject(taskId)).toMatchObject({
    status: "failed",
    attempts: 4,
    last_error: "stale_claim",
    response_status: null,
    last_attempt_at: expect.stringMatching(ISO_MS),
  });
  expect(postsFor(taskId)).toHaveLength(0);
});
