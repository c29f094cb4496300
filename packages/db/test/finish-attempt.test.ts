import { claimAttemptRow, createDatabase, finishAttemptRow, listAttempts, type AttemptRecord } from "@gen/db";
import { newDeliveryId, newTaskId, newUserId } from "@gen/ids";

// finishAttemptRow's text has four shapes (a `failed` that keeps an earlier `delivered` or not,
// a 2xx that sets delivered_at or not); each one, and a second report of the same attempt.
const db = createDatabase(process.env.DATABASE_URL!);
const userId = newUserId();
beforeAll(() => db.user.create({ data: { id: userId, credits: 0 } }));
afterAll(() => db.$disconnect());

async function openAttempt(delivery: { status: string; attempts: number; nextAttemptAt: Date | null; deliveredAt?: Date }) {
  const taskId = newTaskId();
  await db.task.create({
    data: {
      id: taskId,
      userId,
      endpoint: "images",
      model: "sim-image-1",
      status: "completed",
      input: { prompt: "x" },
      output: { image_urls: ["a"] },
      webhookUrl: "https://h.example/x",
      requestId: "req_1",
      billingMethod: "flat",
      reservedCredits: 4,
      chargedCredits: 4,
      startedAt: new Date(),
      finishedAt: new Date(),
    },
  });
  await db.webhookDelivery.create({ data: { taskId, url: "https://h.example/x", ...delivery } });
  const attempt = delivery.attempts + 1;
  const attemptId = newDeliveryId();
  expect(await claimAttemptRow(db, taskId, attempt, attemptId, new Date())).toBeDefined();
  return { taskId, attempt, attemptId };
}

const record = (open: { attempt: number; attemptId: string }, fields: Partial<AttemptRecord>): AttemptRecord => ({
  attempt: open.attempt,
  attemptId: open.attemptId,
  finishedAt: new Date(),
  outcome: "http_500",
  responseStatus: 500,
  durationMs: 5,
  status: "failed",
  lastError: "http_500",
  nextAttemptAt: null,
  ...fields,
});

test("a 2xx delivers and sets delivered_at; a second report of the attempt changes nothing", async () => {
  const open = await openAttempt({ status: "pending", attempts: 0, nextAttemptAt: null });
  const finishedAt = new Date();
  const delivered = record(open, { finishedAt, outcome: "delivered", responseStatus: 200, status: "delivered", lastError: null });
  expect(await finishAttemptRow(db, delivered)).toBe("delivered");
  expect(await finishAttemptRow(db, record(open, { outcome: "attempt_lost", responseStatus: null, lastError: "attempt_lost" }))).toBeUndefined();
  expect(await db.webhookDelivery.findUnique({ where: { taskId: open.taskId } })).toMatchObject({
    status: "delivered",
    responseStatus: 200,
    lastError: null,
    deliveredAt: finishedAt,
    nextAttemptAt: null,
  });
  expect((await listAttempts(db, open.taskId))[0]).toMatchObject({ outcome: "delivered", responseStatus: 200, finishedAt });
});

test("a failure with a retry waits for it; the last failure is failed", async () => {
  const open = await openAttempt({ status: "pending", attempts: 0, nextAttemptAt: null });
  const due = new Date(Date.now() + 40_000);
  expect(await finishAttemptRow(db, record(open, { status: "in_progress", nextAttemptAt: due }))).toBe("in_progress");
  expect(await db.webhookDelivery.findUnique({ where: { taskId: open.taskId } })).toMatchObject({
    status: "in_progress",
    nextAttemptAt: due,
    deliveredAt: null,
  });

  const last = await openAttempt({ status: "in_progress", attempts: 2, nextAttemptAt: new Date() });
  expect(await finishAttemptRow(db, record(last, {}))).toBe("failed");
  expect(await db.webhookDelivery.findUnique({ where: { taskId: last.taskId } })).toMatchObject({ status: "failed", lastError: "http_500", deliveredAt: null });
});

test("a failed manual attempt keeps a delivered delivery delivered, with its delivered_at", async () => {
  const deliveredAt = new Date(Date.now() - 60_000);
  const open = await openAttempt({ status: "in_progress", attempts: 1, nextAttemptAt: new Date(), deliveredAt });
  expect(await finishAttemptRow(db, record(open, {}))).toBe("delivered");
  expect(await db.webhookDelivery.findUnique({ where: { taskId: open.taskId } })).toMatchObject({ status: "delivered", deliveredAt, lastError: "http_500" });
});
