import {
  claimAttemptRow,
  claimAttemptRows,
  createDatabase,
  finishAttemptRows,
  loadDeliveryState,
  loadDeliveryStates,
  listAttempts,
  type AttemptRecord,
} from "@gen/db";
import { newDeliveryId, newTaskId, newUserId } from "@gen/ids";

// The batched forms of the attempt statements answer each row as its single statement would: the
// same conditions per row, answers in order, and of two claims of one attempt in a batch only one.
const db = createDatabase(process.env.DATABASE_URL!);
const userId = newUserId();
beforeAll(() => db.user.create({ data: { id: userId, credits: 0 } }));
afterAll(() => db.$disconnect());

async function deliveryOf(delivery: {
  status: string;
  attempts?: number;
  nextAttemptAt?: Date | null;
  redeliveryRequestedBy?: string | null;
  deliveredAt?: Date;
}) {
  const id = newTaskId();
  await db.task.create({
    data: {
      id,
      userId,
      endpoint: "images",
      model: "sim-image-1",
      status: "completed",
      input: { prompt: "x" },
      output: { image_urls: ["https://cdn.example/x.png"] },
      webhookUrl: "https://h.example/x",
      requestId: "req_1",
      billingMethod: "flat",
      reservedCredits: 4,
      chargedCredits: 4,
      refundedCredits: 0,
      startedAt: new Date(),
      finishedAt: new Date(),
    },
  });
  await db.webhookDelivery.create({ data: { taskId: id, url: "https://h.example/x", ...delivery } });
  return id;
}

test("states: one answer per pair, in order, as the single read gives it", async () => {
  const first = await deliveryOf({ status: "pending" });
  const waiting = await deliveryOf({ status: "in_progress", attempts: 1, nextAttemptAt: new Date() });
  const pairs = [
    { taskId: first, attempt: 1 },
    { taskId: newTaskId(), attempt: 1 },
    { taskId: waiting, attempt: 2 },
  ];
  const batch = await loadDeliveryStates(db, pairs);
  const single = await Promise.all(pairs.map(({ taskId, attempt }) => loadDeliveryState(db, taskId, attempt)));
  expect(batch).toEqual(single);
  expect(batch[1]).toBeUndefined();
});

test("claims: each row's conditions, one of two claims of the same attempt, the task as the single claim reads it", async () => {
  const pending = await deliveryOf({ status: "pending" });
  const waiting = await deliveryOf({ status: "in_progress", attempts: 1, nextAttemptAt: new Date() });
  const manual = await deliveryOf({ status: "in_progress", attempts: 3, nextAttemptAt: new Date(), redeliveryRequestedBy: "op@example.com" });
  const running = await deliveryOf({ status: "in_progress", attempts: 1, nextAttemptAt: null });
  const twin = await deliveryOf({ status: "pending" });
  const now = new Date();
  const requests = [
    { taskId: pending, attempt: 1, id: newDeliveryId(), now },
    { taskId: pending, attempt: 1, id: newDeliveryId(), now },
    { taskId: waiting, attempt: 2, id: newDeliveryId(), now },
    { taskId: manual, attempt: 4, id: newDeliveryId(), now },
    { taskId: running, attempt: 2, id: newDeliveryId(), now },
    { taskId: waiting, attempt: 3, id: newDeliveryId(), now },
  ];
  const answers = await claimAttemptRows(db, requests);
  expect(answers.slice(0, 2).filter((answer) => answer !== undefined)).toHaveLength(1);
  expect(answers[2]).toMatchObject({ requestedBy: null, task: { id: waiting } });
  expect(answers[3]).toMatchObject({ requestedBy: "op@example.com", task: { id: manual } });
  expect(answers.slice(4)).toEqual([undefined, undefined]);
  const winner = requests[answers[0] ? 0 : 1]!;
  expect((await listAttempts(db, pending)).map((attempt) => attempt.id)).toEqual([winner.id]);
  expect(await db.webhookDelivery.findUnique({ where: { taskId: waiting } })).toMatchObject({ status: "in_progress", attempts: 2, nextAttemptAt: null });
  // The same columns and values as the single statement reads for an identical task.
  const single = await claimAttemptRow(db, twin, 1, newDeliveryId(), now);
  const { id: _batchId, createdAt: batchCreatedAt, ...batchTask } = answers[2]!.task;
  const { id: _singleId, createdAt: singleCreatedAt, ...singleTask } = single!.task;
  expect(batchTask).toEqual(singleTask);
  expect([batchCreatedAt, singleCreatedAt].map((at) => at instanceof Date)).toEqual([true, true]);
});

test("finishes: every shape per row, and a second report of an attempt changes nothing", async () => {
  const open = async (delivery: Parameters<typeof deliveryOf>[0]) => {
    const taskId = await deliveryOf(delivery);
    const attempt = (delivery.attempts ?? 0) + 1;
    const attemptId = newDeliveryId();
    expect(await claimAttemptRow(db, taskId, attempt, attemptId, new Date())).toBeDefined();
    return { taskId, attempt, attemptId };
  };
  const record = (o: { attempt: number; attemptId: string }, fields: Partial<AttemptRecord>): AttemptRecord => ({
    attempt: o.attempt,
    attemptId: o.attemptId,
    finishedAt: new Date(),
    outcome: "http_500",
    responseStatus: 500,
    durationMs: 5,
    status: "failed",
    lastError: "http_500",
    nextAttemptAt: null,
    ...fields,
  });
  const deliveredAt = new Date(Date.now() - 60_000);
  const delivers = await open({ status: "pending" });
  const retries = await open({ status: "pending" });
  const keeps = await open({ status: "in_progress", attempts: 1, nextAttemptAt: new Date(), deliveredAt });
  const fails = await open({ status: "in_progress", attempts: 2, nextAttemptAt: new Date() });
  const finishedAt = new Date();
  const due = new Date(Date.now() + 40_000);
  const records = [
    record(delivers, { finishedAt, outcome: "delivered", responseStatus: 200, status: "delivered", lastError: null }),
    record(retries, { status: "in_progress", nextAttemptAt: due }),
    record(keeps, {}),
    record(fails, {}),
  ];
  expect(await finishAttemptRows(db, records)).toEqual(["delivered", "in_progress", "delivered", "failed"]);
  expect(await finishAttemptRows(db, [record(delivers, { outcome: "attempt_lost", responseStatus: null, lastError: "attempt_lost" }), records[3]!])).toEqual([
    undefined,
    undefined,
  ]);
  const row = (taskId: string) => db.webhookDelivery.findUnique({ where: { taskId } });
  expect(await row(delivers.taskId)).toMatchObject({ status: "delivered", responseStatus: 200, lastError: null, deliveredAt: finishedAt, nextAttemptAt: null });
  expect(await row(retries.taskId)).toMatchObject({ status: "in_progress", nextAttemptAt: due, deliveredAt: null, lastError: "http_500" });
  expect(await row(keeps.taskId)).toMatchObject({ status: "delivered", deliveredAt, lastError: "http_500" });
  expect(await row(fails.taskId)).toMatchObject({ status: "failed", deliveredAt: null });
  expect((await listAttempts(db, delivers.taskId))[0]).toMatchObject({ outcome: "delivered", responseStatus: 200, finishedAt });
});
