import { Worker } from "bullmq";
import { newDeliveryId } from "@gen/ids";
import { QUEUE_NAMES, webhookJobId } from "@gen/queues";
import { enqueueWebhookAttempt, requestRedelivery } from "@gen/webhook-delivery";
import { reconcileDeliveries } from "../../src/delivery/index.ts";
import { createDeliveryFixture, hookUrl, type DeliveryFixture } from "./helpers/delivery-fixture.ts";
import { createScratchDatabase } from "../../../../test/support/scratch-database.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./helpers/webhook-receiver.ts";
import { insertRow, updateRows } from "../../../../test/support/db-rows.ts";

const RETRY_MS = 1_000;
const GRACE_MS = 300;
// No attempt here waits on its receiver; the time-out is long so that a POST slowed by a busy machine is not
// retried (which would send a second POST), and short enough that the seeded open attempts below are lost.
const TIMEOUT_MS = 3_000;
let database: Awaited<ReturnType<typeof createScratchDatabase>>;
let fx: DeliveryFixture;
let ok: WebhookReceiver;

beforeAll(async () => {
  database = await createScratchDatabase();
  fx = await createDeliveryFixture({ timeoutMs: TIMEOUT_MS, retryDelayMs: RETRY_MS, finalAttemptMs: 30_000, databaseUrl: database.url });
  ok = await startWebhookReceiver(fx.cert);
}, 60_000);
// The reconciler scans the whole database: what one test leaves behind (an attempt left open on purpose, a
// delivery waiting for its retry) would turn stranded or lost during a later test, after a slow run, and
// change that test's counts. Every test starts from an empty database and queue.
afterEach(async () => {
  await fx.stopWorkers();
  await lostRedis();
  await fx.db.$sql.query("TRUNCATE webhook_attempts, webhook_deliveries, tasks CASCADE");
});
afterAll(async () => {
  await fx.close();
  await ok.close();
  await database.drop();
});

// `at` pins the reconciler's clock where a test asserts what is not yet due (or not yet lost) at a given moment:
// with the real clock, a stall between seeding and reconciling longer than the grace period would make it due.
const reconcile = (at?: Date) =>
  reconcileDeliveries({ config: fx.config, db: fx.db, webhookQueue: fx.queue, logger: fx.logger, ...(at ? { now: () => at } : {}) }, { graceMs: GRACE_MS });
const jobState = (taskId: string, attempt: number) => fx.queue.getJobState(webhookJobId(taskId, attempt));
const ago = (ms: number, from = new Date()) => new Date(from.getTime() - ms);
const postsFor = (receiver: WebhookReceiver, taskId: string) => receiver.requests.filter((request) => request.body.toString("utf8").includes(taskId)).length;

async function lostRedis() {
  await fx.queue.obliterate({ force: true });
}

async function seedOpenAttempt(attemptNo: 1 | 2 | 3, options: { finishedAgoMs: number; startedAgoMs: number; from?: Date }) {
  const from = options.from ?? new Date();
  const taskId = await fx.createTask({ url: hookUrl(ok.port), finishedAt: ago(options.finishedAgoMs, from) });
  for (let no = 1; no < attemptNo; no++) {
    await insertRow(fx.db, "webhook_attempts", {
      id: newDeliveryId(),
      taskId,
      attemptNo: no,
      startedAt: ago(options.startedAgoMs + 2_000, from),
      finishedAt: ago(options.startedAgoMs + 1_900, from),
      outcome: "http_500",
      responseStatus: 500,
      durationMs: 100,
    });
  }
  const attempt = await insertRow(fx.db, "webhook_attempts", { id: newDeliveryId(), taskId, attemptNo, startedAt: ago(options.startedAgoMs, from) });
  await updateRows(
    fx.db,
    "webhook_deliveries",
    { taskId },
    {
      status: "in_progress",
      attempts: attemptNo,
      responseStatus: attemptNo > 1 ? 500 : null,
      lastError: attemptNo > 1 ? "http_500" : null,
      lastAttemptAt: attempt.startedAt,
      nextAttemptAt: null,
    },
  );
  return { taskId, attempt };
}

test("(a) a terminal task whose hand-off never happened gets attempt 1; fresh, unfinished and queued ones are left alone", async () => {
  const now = new Date();
  const stranded = await fx.createTask({ url: hookUrl(ok.port), finishedAt: ago(5_000, now) });
  const fresh = await fx.createTask({ url: hookUrl(ok.port), finishedAt: now });
  const running = await fx.createTask({ url: hookUrl(ok.port) });
  await updateRows(fx.db, "tasks", { id: running }, { status: "in_progress", finishedAt: null });
  const queued = await fx.createTask({ url: hookUrl(ok.port), finishedAt: ago(5_000, now) });
  await fx.handOff(queued);

  expect(await reconcile(now)).toEqual({ enqueued: 1, lost: 0 });
  expect(await jobState(stranded, 1)).toBe("waiting");
  expect(await jobState(fresh, 1)).toBe("unknown");
  expect(await jobState(running, 1)).toBe("unknown");
  // A second pass (or another worker's) finds a live job everywhere.
  expect(await reconcile(now)).toEqual({ enqueued: 0, lost: 0 });

  fx.startWorker();
  await fx.waitFor(async () => (await fx.delivery(stranded)).status === "delivered" && (await fx.delivery(queued)).status === "delivered");
  expect(postsFor(ok, stranded)).toBe(1);
  expect(postsFor(ok, queued)).toBe(1);
  expect((await fx.delivery(running)).status).toBe("pending");

  // Past the grace period the fresh one counts as stranded too.
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS));
  expect(await reconcile()).toEqual({ enqueued: 1, lost: 0 });
  await fx.waitFor(async () => (await fx.delivery(fresh)).status === "delivered");
});

test("(a) a job that failed (its handler threw) is replaced", async () => {
  const taskId = await fx.createTask({ url: hookUrl(ok.port), finishedAt: ago(5_000) });
  await fx.handOff(taskId);
  const connection = fx.redis.duplicate();
  const worker = new Worker(QUEUE_NAMES.webhook, null, { connection, prefix: fx.queuePrefix, autorun: false });
  const job = await worker.getNextJob("token-1");
  expect(job?.id).toBe(webhookJobId(taskId, 1));
  await job!.moveToFailed(new Error("database unavailable"), "token-1", false);
  await worker.close();
  connection.disconnect();
  expect(await jobState(taskId, 1)).toBe("failed");

  expect(await reconcile()).toEqual({ enqueued: 1, lost: 0 });
  expect(await jobState(taskId, 1)).toBe("waiting");
  fx.startWorker();
  await fx.waitFor(async () => (await fx.delivery(taskId)).status === "delivered");
});

test("(a)+(b) after Redis lost every job, pending and waiting deliveries are enqueued again once due", async () => {
  const flaky = await startWebhookReceiver(fx.cert, (index) => (index === 0 ? 500 : 200));
  try {
    const between = await fx.createTask({ url: hookUrl(flaky.port) });
    fx.startWorker();
    await fx.handOff(between);
    const [first] = await fx.waitFor(async () => {
      const rows = await fx.attempts(between);
      return rows[0]?.finishedAt != null && rows;
    });
    await fx.stopWorkers();
    expect(await jobState(between, 2)).toBe("delayed");
    // Attempt 2 is due a retry delay after attempt 1 ended: the reconciler looks at the moment it ended.
    const beforeDue = first!.finishedAt!;
    const handedOff = await fx.createTask({ url: hookUrl(ok.port), finishedAt: ago(5_000, beforeDue) });
    await fx.handOff(handedOff);

    await lostRedis();
    expect(await jobState(between, 2)).toBe("unknown");
    expect(await jobState(handedOff, 1)).toBe("unknown");

    // Attempt 2 is not due yet: only the pending delivery is enqueued.
    expect(await reconcile(beforeDue)).toEqual({ enqueued: 1, lost: 0 });
    expect(await jobState(handedOff, 1)).toBe("waiting");
    expect(await jobState(between, 2)).toBe("unknown");

    const due = (await fx.delivery(between)).nextAttemptAt!;
    expect(due.getTime()).toBe(first!.finishedAt!.getTime() + RETRY_MS);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due.getTime() + GRACE_MS + 50 - Date.now())));
    expect(await reconcile()).toEqual({ enqueued: 1, lost: 0 });
    expect(await jobState(between, 2)).toBe("waiting");

    fx.startWorker();
    await fx.waitFor(async () => (await fx.delivery(between)).status === "delivered" && (await fx.delivery(handedOff)).status === "delivered");
    expect(flaky.arrivals).toHaveLength(2);
    expect(postsFor(ok, handedOff)).toBe(1);
    expect(await fx.webhookObject(between)).toMatchObject({ status: "delivered", attempts: 2, response_status: 200, last_error: null });
  } finally {
    await flaky.close();
  }
});

test("(c) an attempt that never finished and has no job is attempt_lost, and attempt 2 follows the schedule", async () => {
  const now = new Date();
  const orphan = await seedOpenAttempt(1, { finishedAgoMs: 10_000, startedAgoMs: 9_000, from: now });
  // This one's job is still queued: the handler, not the reconciler, deals with it.
  const queued = await seedOpenAttempt(1, { finishedAgoMs: 10_000, startedAgoMs: 9_000, from: now });
  await enqueueWebhookAttempt(fx.queue, queued.taskId, 1, 0);
  // Too recent to be lost: it may still be running.
  const recent = await seedOpenAttempt(1, { finishedAgoMs: 1_000, startedAgoMs: 500, from: now });

  const before = now.getTime();
  expect(await reconcile(now)).toEqual({ enqueued: 0, lost: 1 });
  const [lost] = await fx.attempts(orphan.taskId);
  expect(lost).toMatchObject({ id: orphan.attempt.id, outcome: "attempt_lost", responseStatus: null });
  expect(lost!.durationMs).toBe(lost!.finishedAt!.getTime() - orphan.attempt.startedAt.getTime());
  expect(await fx.webhookObject(orphan.taskId)).toMatchObject({
    status: "in_progress",
    attempts: 1,
    last_error: "attempt_lost",
    response_status: null,
    delivered_at: null,
  });
  const due = (await fx.delivery(orphan.taskId)).nextAttemptAt!;
  expect(due.getTime()).toBe(lost!.finishedAt!.getTime() + RETRY_MS);
  expect(await jobState(orphan.taskId, 2)).toBe("delayed");
  expect((await fx.attempts(queued.taskId))[0]!.finishedAt).toBeNull();
  expect((await fx.attempts(recent.taskId))[0]!.finishedAt).toBeNull();

  fx.startWorker();
  await fx.waitFor(async () => (await fx.delivery(orphan.taskId)).status === "delivered");
  const [, second] = await fx.attempts(orphan.taskId);
  expect(second!.startedAt.getTime()).toBeGreaterThanOrEqual(before + RETRY_MS - 5);
  expect(postsFor(ok, orphan.taskId)).toBe(1);
  // The queued job ran: it found its attempt open and recorded it lost instead of sending it.
  await fx.waitFor(async () => (await fx.attempts(queued.taskId))[0]!.outcome === "attempt_lost" || undefined);
});

test("(c) a lost attempt 3 ends the delivery as failed", async () => {
  const { taskId } = await seedOpenAttempt(3, { finishedAgoMs: 40_000, startedAgoMs: 8_000 });
  expect(await reconcile()).toEqual({ enqueued: 0, lost: 1 });
  expect(await fx.webhookObject(taskId)).toMatchObject({
    status: "failed",
    attempts: 3,
    last_error: "attempt_lost",
    response_status: null,
    delivered_at: null,
  });
  expect((await fx.delivery(taskId)).nextAttemptAt).toBeNull();
  expect(await reconcile()).toEqual({ enqueued: 0, lost: 0 });
});

test("(b) a manual redelivery whose job was lost is enqueued once due, and sent once", async () => {
  const taskId = await fx.createTask({ url: hookUrl(ok.port), finishedAt: ago(60_000) });
  await updateRows(
    fx.db,
    "webhook_deliveries",
    { taskId },
    { status: "failed", attempts: 3, lastError: "http_500", responseStatus: 500, lastAttemptAt: ago(50_000) },
  );
  expect(await requestRedelivery({ db: fx.db, webhookQueue: fx.queue }, taskId, "alice", ago(GRACE_MS + 100))).toEqual({
    ok: true,
    attempt: 4,
    enqueued: true,
  });
  await lostRedis();

  expect(await reconcile()).toEqual({ enqueued: 1, lost: 0 });
  expect(await jobState(taskId, 4)).toBe("waiting");
  expect(await reconcile()).toEqual({ enqueued: 0, lost: 0 });
  fx.startWorker();
  await fx.waitFor(async () => (await fx.delivery(taskId)).status === "delivered");
  expect(await fx.attempts(taskId)).toMatchObject([{ attemptNo: 4, outcome: "delivered", requestedBy: "alice" }]);
  expect(postsFor(ok, taskId)).toBe(1);
});

test("(c) a manual attempt 2 that never finished is attempt_lost; the delivery is delivered again and no attempt 3 follows", async () => {
  const { taskId, attempt } = await seedOpenAttempt(2, { finishedAgoMs: 60_000, startedAgoMs: 8_000 });
  // Attempt 1 had been delivered; the operator sent it again.
  const deliveredAt = ago(59_000);
  await updateRows(fx.db, "webhook_attempts", { taskId, attemptNo: 1 }, { outcome: "delivered", responseStatus: 200, finishedAt: deliveredAt });
  await updateRows(fx.db, "webhook_attempts", { id: attempt.id }, { requestedBy: "alice" });
  await updateRows(fx.db, "webhook_deliveries", { taskId }, { redeliveryRequestedBy: "alice", deliveredAt, lastError: null, responseStatus: 200 });

  expect(await reconcile()).toEqual({ enqueued: 0, lost: 1 });
  // The API keeps showing the delivering attempt 1; the row records the lost resend.
  expect(await fx.webhookObject(taskId)).toMatchObject({
    status: "delivered",
    attempts: 1,
    last_error: null,
    response_status: 200,
    delivered_at: deliveredAt.toISOString(),
  });
  const delivery = await fx.delivery(taskId);
  expect(delivery).toMatchObject({ status: "delivered", attempts: 2, lastError: "attempt_lost", responseStatus: null });
  expect(delivery.nextAttemptAt).toBeNull();
  expect(delivery.redeliveryRequestedBy).toBeNull();
  expect(await jobState(taskId, 3)).toBe("unknown");
  expect(await reconcile()).toEqual({ enqueued: 0, lost: 0 });
});

test("reconcilers running at once on several workers still send one POST", async () => {
  const taskId = await fx.createTask({ url: hookUrl(ok.port), finishedAt: ago(5_000) });
  const results = await Promise.all([reconcile(), reconcile(), reconcile()]);
  expect(results.reduce((sum, result) => sum + result.enqueued, 0)).toBeGreaterThanOrEqual(1);
  fx.startWorker();
  fx.startWorker();
  await fx.waitFor(async () => (await fx.delivery(taskId)).status === "delivered");
  await Promise.all([reconcile(), reconcile()]);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(postsFor(ok, taskId)).toBe(1);
  expect(await fx.attempts(taskId)).toHaveLength(1);
});
