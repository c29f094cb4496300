import { sql } from "kysely";
import {
  TASK_FOR_BODY_COLUMNS,
  claimAttemptRows,
  createDatabase,
  finishAttemptRows,
  listAttempts,
  loadDeliveryStates,
  type AttemptRecord,
  type ClaimRequest,
  ensureUser,
  findTask,
} from "@gen/db";
import type { DeliveryStatus } from "@gen/domain";
import { newDeliveryId, newTaskId, newUserId } from "@gen/ids";
import { createScratchDatabase } from "../../../test/support/scratch-database.ts";
import { deleteRows, findRow, insertRow } from "../../../test/support/db-rows.ts";

// The three statements of an attempt, in their one (batched) form. A lone attempt is a batch of
// one: every condition is checked that way first (stateOf, claimOne, finishOne), then in batches
// whose rows meet the same conditions, and two claims of one attempt in a batch. The claim and the
// read of the task a body is rendered from are one statement: whatever it returns, the delivery and
// the attempt log agree with it. A finish has four cases (a `failed` that keeps an earlier
// `delivered` or not, a 2xx that sets delivered_at or not): each one, and a second report of the
// same attempt.
const db = createDatabase(process.env.DATABASE_URL!);
const userId = newUserId();
beforeAll(() => ensureUser(db, userId));
afterAll(() => db.$disconnect());

async function deliveryOf(delivery: {
  status: DeliveryStatus;
  attempts?: number;
  nextAttemptAt?: Date | null;
  redeliveryRequestedBy?: string | null;
  deliveredAt?: Date;
}) {
  const id = newTaskId();
  await insertRow(db, "tasks", {
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
  });
  await insertRow(db, "webhook_deliveries", { taskId: id, url: "https://h.example/x", ...delivery });
  return id;
}

const stateOf = async (taskId: string, attempt: number) => (await loadDeliveryStates(db, [{ taskId, attempt }]))[0];
const claimOne = async (taskId: string, attempt: number, id: string, now: Date) => (await claimAttemptRows(db, [{ taskId, attempt, id, now }]))[0];
const finishOne = async (record: AttemptRecord) => (await finishAttemptRows(db, [record]))[0];

async function bodyOf(taskId: string) {
  const task = (await findTask(db, taskId))!;
  return Object.fromEntries(TASK_FOR_BODY_COLUMNS.map((column) => [column, task[column]]));
}

/** What a claim answers for the task: who asked, the submission's request id, the body's columns. */
async function claimOf(taskId: string, requestedBy: string | null) {
  return { requestedBy, requestId: (await findTask(db, taskId))!.requestId, task: await bodyOf(taskId) };
}

test("a claim returns the task's body columns as Prisma reads them, and opens the attempt", async () => {
  const taskId = await deliveryOf({ status: "pending" });
  const now = new Date();
  const attemptId = newDeliveryId();
  const claimed = await claimOne(taskId, 1, attemptId, now);
  expect(claimed).toEqual(await claimOf(taskId, null));
  expect(await findRow(db, "webhook_deliveries", { taskId })).toMatchObject({
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
  const first = await claimOne(taskId, 1, newDeliveryId(), new Date());
  // The second is a re-run of the job after the first claimed (a lost lock, a duplicate job): the
  // attempt is open, not waiting, so nothing is claimed and nothing more is read or written.
  const second = await claimOne(taskId, 1, newDeliveryId(), new Date());
  expect(first).toBeDefined();
  expect(second).toBeUndefined();
  expect(await listAttempts(db, taskId)).toHaveLength(1);
});

test("a finished delivery, or one not waiting for that attempt, is not claimed", async () => {
  for (const delivery of [
    { status: "delivered" as const, attempts: 1 },
    { status: "failed" as const, attempts: 3 },
    // Attempt 1 open (no next attempt due): attempt 2 cannot be claimed.
    { status: "in_progress" as const, attempts: 1, nextAttemptAt: null },
  ]) {
    const taskId = await deliveryOf(delivery);
    expect(await claimOne(taskId, delivery.attempts + 1, newDeliveryId(), new Date())).toBeUndefined();
    expect(await claimOne(taskId, 1, newDeliveryId(), new Date())).toBeUndefined();
    expect(await listAttempts(db, taskId)).toHaveLength(0);
    expect(await findRow(db, "webhook_deliveries", { taskId })).toMatchObject(delivery);
  }
});

test("a waiting attempt is claimed, and an operator's manual one carries who asked for it", async () => {
  const scheduled = await deliveryOf({ status: "in_progress", attempts: 1, nextAttemptAt: new Date() });
  expect(await claimOne(scheduled, 2, newDeliveryId(), new Date())).toMatchObject({ requestedBy: null, task: { id: scheduled } });
  const manual = await deliveryOf({ status: "in_progress", attempts: 3, nextAttemptAt: new Date(), redeliveryRequestedBy: "op@example.com" });
  expect(await claimOne(manual, 4, newDeliveryId(), new Date())).toMatchObject({ requestedBy: "op@example.com", task: { id: manual } });
  expect((await listAttempts(db, manual))[0]).toMatchObject({ attemptNo: 4, requestedBy: "op@example.com" });
});

test("a delivery whose task row is gone is not claimed", async () => {
  const taskId = await deliveryOf({ status: "pending" });
  await deleteRows(db, "tasks", { id: taskId });
  expect(await claimOne(taskId, 1, newDeliveryId(), new Date())).toBeUndefined();
  expect(await listAttempts(db, taskId)).toHaveLength(0);
  expect(await findRow(db, "webhook_deliveries", { taskId })).toMatchObject({ status: "pending", attempts: 0 });
});

async function openAttempt(delivery: { status: DeliveryStatus; attempts: number; nextAttemptAt: Date | null; deliveredAt?: Date }) {
  const taskId = await deliveryOf(delivery);
  const attempt = delivery.attempts + 1;
  const attemptId = newDeliveryId();
  expect(await claimOne(taskId, attempt, attemptId, new Date())).toBeDefined();
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
  expect(await finishOne(delivered)).toBe("delivered");
  expect(await finishOne(record(open, { outcome: "attempt_lost", responseStatus: null, lastError: "attempt_lost" }))).toBeUndefined();
  expect(await findRow(db, "webhook_deliveries", { taskId: open.taskId })).toMatchObject({
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
  expect(await finishOne(record(open, { status: "in_progress", nextAttemptAt: due }))).toBe("in_progress");
  expect(await findRow(db, "webhook_deliveries", { taskId: open.taskId })).toMatchObject({
    status: "in_progress",
    nextAttemptAt: due,
    deliveredAt: null,
  });

  const last = await openAttempt({ status: "in_progress", attempts: 2, nextAttemptAt: new Date() });
  expect(await finishOne(record(last, {}))).toBe("failed");
  expect(await findRow(db, "webhook_deliveries", { taskId: last.taskId })).toMatchObject({
    status: "failed",
    lastError: "http_500",
    deliveredAt: null,
  });
});

test("a failed manual attempt keeps a delivered delivery delivered, with its delivered_at", async () => {
  const deliveredAt = new Date(Date.now() - 60_000);
  const open = await openAttempt({ status: "in_progress", attempts: 1, nextAttemptAt: new Date(), deliveredAt });
  expect(await finishOne(record(open, {}))).toBe("delivered");
  expect(await findRow(db, "webhook_deliveries", { taskId: open.taskId })).toMatchObject({
    status: "delivered",
    deliveredAt,
    lastError: "http_500",
  });
});

test("a lone state read: the delivery, its task's end and owner, and the attempt's row once claimed", async () => {
  const taskId = await deliveryOf({ status: "pending" });
  const task = (await findTask(db, taskId))!;
  const unclaimed = { attemptId: null, attemptStartedAt: null, attemptFinishedAt: null, attemptRequestedBy: null };
  expect(await stateOf(taskId, 1)).toEqual({
    taskId,
    url: "https://h.example/x",
    status: "pending",
    attempts: 0,
    nextAttemptAt: null,
    redeliveryRequestedBy: null,
    taskStatus: "failed",
    taskFinishedAt: task.finishedAt,
    taskUserId: task.userId,
    ...unclaimed,
  });
  const attemptId = newDeliveryId();
  const startedAt = new Date();
  await claimOne(taskId, 1, attemptId, startedAt);
  expect(await stateOf(taskId, 1)).toMatchObject({ status: "in_progress", attempts: 1, attemptId, attemptStartedAt: startedAt, attemptFinishedAt: null });
  // Another attempt's row is not this attempt's.
  expect(await stateOf(taskId, 2)).toMatchObject({ status: "in_progress", attempts: 1, ...unclaimed });
  const manual = await deliveryOf({ status: "in_progress", attempts: 3, nextAttemptAt: new Date(), redeliveryRequestedBy: "op@example.com" });
  await claimOne(manual, 4, newDeliveryId(), new Date());
  expect(await stateOf(manual, 4)).toMatchObject({ attempts: 4, attemptRequestedBy: "op@example.com" });
});

test("a lone state read of a delivery that does not exist, or whose task row is gone, has no answer", async () => {
  expect(await stateOf(newTaskId(), 1)).toBeUndefined();
  const taskId = await deliveryOf({ status: "pending" });
  await deleteRows(db, "tasks", { id: taskId });
  expect(await stateOf(taskId, 1)).toBeUndefined();
});

test("hostile task ids travel inside the arrays as plain values: no answer, no error, the other rows unharmed", async () => {
  const taskId = await deliveryOf({ status: "pending" });
  const hostile = ['a"b', "{x,y}", "a\\b", "NULL", "", "x'); DROP TABLE tasks; --", "é\u2028"];
  expect(
    await loadDeliveryStates(
      db,
      [...hostile, taskId].map((id) => ({ taskId: id, attempt: 1 })),
    ),
  ).toEqual([...hostile.map(() => undefined), expect.objectContaining({ taskId, status: "pending" })]);
  const now = new Date();
  const answers = await claimAttemptRows(
    db,
    [...hostile, taskId].map((id) => ({ taskId: id, attempt: 1, id: newDeliveryId(), now })),
  );
  expect(answers.slice(0, -1)).toEqual(hostile.map(() => undefined));
  expect(answers.at(-1)).toMatchObject({ task: { id: taskId } });
  expect(await finishAttemptRows(db, [record({ attempt: 1, attemptId: 'whd_"}{' }, {})])).toEqual([undefined]);
});

// Batches of several: each row answered as it would be alone (the same conditions per row), answers
// in order, and of two claims of one attempt in a batch only one.
test("batched states: one answer per pair, in order, as each pair's lone read gives it", async () => {
  const first = await deliveryOf({ status: "pending" });
  const waiting = await deliveryOf({ status: "in_progress", attempts: 1, nextAttemptAt: new Date() });
  const pairs = [
    { taskId: first, attempt: 1 },
    { taskId: newTaskId(), attempt: 1 },
    { taskId: waiting, attempt: 2 },
    { taskId: waiting, attempt: 1 },
  ];
  const batch = await loadDeliveryStates(db, pairs);
  const alone = await Promise.all(pairs.map(({ taskId, attempt }) => stateOf(taskId, attempt)));
  expect(batch).toEqual(alone);
  expect(batch.map((state) => state?.taskId)).toEqual([first, undefined, waiting, waiting]);
  expect(batch[2]).toMatchObject({ status: "in_progress", attempts: 1, attemptId: null });
});

test("batched claims: each row's conditions, one of two claims of the same attempt, the task's body columns", async () => {
  const pending = await deliveryOf({ status: "pending" });
  const waiting = await deliveryOf({ status: "in_progress", attempts: 1, nextAttemptAt: new Date() });
  const manual = await deliveryOf({ status: "in_progress", attempts: 3, nextAttemptAt: new Date(), redeliveryRequestedBy: "op@example.com" });
  const running = await deliveryOf({ status: "in_progress", attempts: 1, nextAttemptAt: null });
  const now = new Date();
  const requests: ClaimRequest[] = [
    { taskId: pending, attempt: 1, id: newDeliveryId(), now },
    { taskId: pending, attempt: 1, id: newDeliveryId(), now },
    { taskId: waiting, attempt: 2, id: newDeliveryId(), now },
    { taskId: manual, attempt: 4, id: newDeliveryId(), now },
    { taskId: running, attempt: 2, id: newDeliveryId(), now },
    { taskId: waiting, attempt: 3, id: newDeliveryId(), now },
  ];
  const answers = await claimAttemptRows(db, requests);
  expect(answers.slice(0, 2).filter((answer) => answer !== undefined)).toHaveLength(1);
  expect(answers[2]).toEqual(await claimOf(waiting, null));
  expect(answers[3]).toEqual(await claimOf(manual, "op@example.com"));
  expect(answers.slice(4)).toEqual([undefined, undefined]);
  const winner = requests[answers[0] ? 0 : 1]!;
  expect((await listAttempts(db, pending)).map((attempt) => attempt.id)).toEqual([winner.id]);
  expect(await findRow(db, "webhook_deliveries", { taskId: waiting })).toMatchObject({
    status: "in_progress",
    attempts: 2,
    nextAttemptAt: null,
  });
  expect(await findRow(db, "webhook_deliveries", { taskId: running })).toMatchObject({ status: "in_progress", attempts: 1 });
  expect(await listAttempts(db, running)).toHaveLength(0);
});

test("batched finishes: every shape per row, and a second report of an attempt changes nothing", async () => {
  const deliveredAt = new Date(Date.now() - 60_000);
  const delivers = await openAttempt({ status: "pending", attempts: 0, nextAttemptAt: null });
  const retries = await openAttempt({ status: "pending", attempts: 0, nextAttemptAt: null });
  const keeps = await openAttempt({ status: "in_progress", attempts: 1, nextAttemptAt: new Date(), deliveredAt });
  const fails = await openAttempt({ status: "in_progress", attempts: 2, nextAttemptAt: new Date() });
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
  const row = (taskId: string) => findRow(db, "webhook_deliveries", { taskId });
  expect(await row(delivers.taskId)).toMatchObject({ status: "delivered", responseStatus: 200, lastError: null, deliveredAt: finishedAt, nextAttemptAt: null });
  expect(await row(retries.taskId)).toMatchObject({ status: "in_progress", nextAttemptAt: due, deliveredAt: null, lastError: "http_500" });
  expect(await row(keeps.taskId)).toMatchObject({ status: "delivered", deliveredAt, lastError: "http_500" });
  expect(await row(fails.taskId)).toMatchObject({ status: "failed", deliveredAt: null });
  expect((await listAttempts(db, delivers.taskId))[0]).toMatchObject({ outcome: "delivered", responseStatus: 200, finishedAt });
});

// A generic plan estimated for ten rows looks costlier than a one-row custom plan on tables of some
// size, and PostgreSQL then plans a lone attempt at every call: the `LIMIT` of each text is what
// keeps the generic plan (batched-statement.ts). On a scratch database with tables of some size,
// analyzed, as in production.
test("lone attempts keep the generic plan of each statement: after five custom plans none is planned again", async () => {
  const scratch = await createScratchDatabase();
  const one = createDatabase(scratch.url, { max: 1 });
  try {
    await sql`INSERT INTO users (id, credits) VALUES (${userId}, 0)`.execute(one.$kysely);
    await sql`INSERT INTO tasks (id, user_id, endpoint, model, status, input, request_id, billing_method, reserved_credits, webhook_url, finished_at)
      SELECT 'task_' || g, ${userId}, 'images', 'sim-image-1', 'completed', '{}', 'req_1', 'flat', 4, 'https://h.example/x', now()
      FROM generate_series(1, 20000) g`.execute(one.$kysely);
    await sql`INSERT INTO webhook_deliveries (task_id, url, status, attempts, updated_at) SELECT id, webhook_url, 'delivered', 1, now() FROM tasks`.execute(
      one.$kysely,
    );
    await sql`INSERT INTO webhook_attempts (id, task_id, attempt_no, started_at, finished_at, outcome) SELECT 'whd_' || id, id, 1, now(), now(), 'delivered' FROM tasks`.execute(
      one.$kysely,
    );
    await sql`UPDATE webhook_deliveries SET status = 'pending', attempts = 0 WHERE task_id IN (SELECT 'task_' || g FROM generate_series(1, 8) g)`.execute(
      one.$kysely,
    );
    await sql`DELETE FROM webhook_attempts WHERE task_id IN (SELECT 'task_' || g FROM generate_series(1, 8) g)`.execute(one.$kysely);
    await sql`ANALYZE`.execute(one.$kysely);
    for (let i = 1; i <= 8; i++) {
      const taskId = `task_${i}`;
      expect(await loadDeliveryStates(one, [{ taskId, attempt: 1 }])).toEqual([expect.objectContaining({ status: "pending" })]);
      const attemptId = newDeliveryId();
      expect(await claimAttemptRows(one, [{ taskId, attempt: 1, id: attemptId, now: new Date() }])).toEqual([expect.anything()]);
      expect(await finishAttemptRows(one, [record({ attempt: 1, attemptId }, {})])).toEqual(["failed"]);
    }
    const plans = await sql<{ generic: number; custom: number }>`
      SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE statement LIKE '%unnest%'`.execute(one.$kysely);
    expect(plans.rows).toEqual([
      { generic: 3, custom: 5 },
      { generic: 3, custom: 5 },
      { generic: 3, custom: 5 },
    ]);
  } finally {
    await one.$disconnect();
    await scratch.drop();
  }
});
