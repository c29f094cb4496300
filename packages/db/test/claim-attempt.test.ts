import { claimAttemptRow, createDatabase, listAttempts } from "@gen/db";
import { newDeliveryId, newTaskId, newUserId } from "@gen/ids";

// The claim and the read of the task a body is rendered from are one statement: whatever it
// returns, the delivery and the attempt log agree with it.
const db = createDatabase(process.env.DATABASE_URL!);
const userId = newUserId();
beforeAll(() => db.user.create({ data: { id: userId, credits: 0 } }));
afterAll(() => db.$disconnect());

async function deliveryOf(delivery: { status: string; attempts?: number; nextAttemptAt?: Date | null; redeliveryRequestedBy?: string | null }) {
  const id = newTaskId();
  await db.task.create({
    data: {
      id,
      userId,
      endpoint: "images",
      model: "sim-image-1",
      status: "failed",
      input: { prompt: "x" },
      webhookUrl: "https://h.example/x",
      requestId: "req_1",
      billingMethod: "flat",
      reservedCredits: 4,
      chargedCredits: 0,
      refundedCredits: 4,
      errorCode: 50001,
      errorMessage: "upstream failed",
      startedAt: new Date(),
      finishedAt: new Date(),
    },
  });
  await db.webhookDelivery.create({ data: { taskId: id, url: "https://h.example/x", ...delivery } });
  return id;
}

test("a claim returns the task's body columns as Prisma reads them, and opens the attempt", async () => {
  const taskId = await deliveryOf({ status: "pending" });
  const now = new Date();
  const attemptId = newDeliveryId();
  const claimed = await claimAttemptRow(db, taskId, 1, attemptId, now);
  const task = (await db.task.findUnique({ where: { id: taskId } }))!;
  const {
    id,
    model,
    status,
    createdAt,
    output,
    errorCode,
    errorMessage,
    chargedCredits,
    reservedCredits,
    refundedCredits,
    billingMethod,
    tokensInput,
    tokensOutput,
  } = task;
  expect(claimed).toEqual({
    requestedBy: null,
    task: {
      id,
      model,
      status,
      createdAt,
      output,
      errorCode,
      errorMessage,
      chargedCredits,
      reservedCredits,
      refundedCredits,
      billingMethod,
      tokensInput,
      tokensOutput,
    },
  });
  expect(await db.webhookDelivery.findUnique({ where: { taskId } })).toMatchObject({
    status: "in_progress",
    attempts: 1,
    lastAttemptAt: now,
    nextAttemptAt: null,
  });
  expect(await listAttempts(db, taskId)).toEqual([
    expect.objectContaining({ id: attemptId, attemptNo: 1, startedAt: now, finishedAt: null, requestedBy: null }),
  ]);
});

test("of two claims of the same attempt only the first gets a row; the second changes nothing", async () => {
  const taskId = await deliveryOf({ status: "pending" });
  const first = await claimAttemptRow(db, taskId, 1, newDeliveryId(), new Date());
  // The second is a re-run of the job after the first claimed (a lost lock, a duplicate job): the
  // attempt is open, not waiting, so nothing is claimed and nothing more is read or written.
  const second = await claimAttemptRow(db, taskId, 1, newDeliveryId(), new Date());
  expect(first).toBeDefined();
  expect(second).toBeUndefined();
  expect(await listAttempts(db, taskId)).toHaveLength(1);
});

test("a finished delivery, or one not waiting for that attempt, is not claimed", async () => {
  for (const delivery of [
    { status: "delivered", attempts: 1 },
    { status: "failed", attempts: 3 },
    // Attempt 1 open (no next attempt due): attempt 2 cannot be claimed.
    { status: "in_progress", attempts: 1, nextAttemptAt: null },
  ]) {
    const taskId = await deliveryOf(delivery);
    expect(await claimAttemptRow(db, taskId, delivery.attempts + 1, newDeliveryId(), new Date())).toBeUndefined();
    expect(await claimAttemptRow(db, taskId, 1, newDeliveryId(), new Date())).toBeUndefined();
    expect(await listAttempts(db, taskId)).toHaveLength(0);
    expect(await db.webhookDelivery.findUnique({ where: { taskId } })).toMatchObject(delivery);
  }
});

test("a waiting attempt is claimed, and an operator's manual one carries who asked for it", async () => {
  const scheduled = await deliveryOf({ status: "in_progress", attempts: 1, nextAttemptAt: new Date() });
  expect(await claimAttemptRow(db, scheduled, 2, newDeliveryId(), new Date())).toMatchObject({ requestedBy: null, task: { id: scheduled } });
  const manual = await deliveryOf({ status: "in_progress", attempts: 3, nextAttemptAt: new Date(), redeliveryRequestedBy: "op@example.com" });
  expect(await claimAttemptRow(db, manual, 4, newDeliveryId(), new Date())).toMatchObject({ requestedBy: "op@example.com", task: { id: manual } });
  expect((await listAttempts(db, manual))[0]).toMatchObject({ attemptNo: 4, requestedBy: "op@example.com" });
});

test("a delivery whose task row is gone is not claimed", async () => {
  const taskId = await deliveryOf({ status: "pending" });
  await db.task.delete({ where: { id: taskId } });
  expect(await claimAttemptRow(db, taskId, 1, newDeliveryId(), new Date())).toBeUndefined();
  expect(await listAttempts(db, taskId)).toHaveLength(0);
  expect(await db.webhookDelivery.findUnique({ where: { taskId } })).toMatchObject({ status: "pending", attempts: 0 });
});
