import { LedgerKind, TaskStatus } from "@gen/domain";
import { createDatabase, findTask, inTransaction, readCredits, readDelivery } from "@gen/db";
import { Wf } from "@gen/errors";
import { newTaskId, newUserId } from "@gen/ids";
import { settleTask } from "@gen/ledger";
import { countRows, deleteRows, findRows, insertRow, insertUser, readRow } from "../../../test/support/db-rows.ts";

const db = createDatabase(process.env.DATABASE_URL!);
afterAll(() => db.$disconnect());

async function reservedTask(reserved: number) {
  const userId = newUserId();
  const id = newTaskId();
  await inTransaction(db, async (tx) => {
    await insertUser(tx, userId, 100 - reserved);
    await insertRow(tx, "ledger_entries", { userId, kind: LedgerKind.Grant, amount: 100, delta: 100 });
    await insertRow(tx, "tasks", {
      id,
      userId,
      endpoint: "images",
      model: "m",
      status: TaskStatus.InProgress,
      input: {},
      requestId: "req_x",
      billingMethod: "flat",
      reservedCredits: reserved,
    });
    await insertRow(tx, "ledger_entries", { userId, taskId: id, kind: LedgerKind.Reserve, amount: reserved, delta: -reserved });
  });
  return { userId, id, task: { id, reservedCredits: reserved } };
}

async function expectInvariant(userId: string, taskId: string) {
  const user = await readRow(db, "users", { id: userId });
  const entries = await findRows(db, "ledger_entries", { userId });
  expect(entries.reduce((sum, entry) => sum + entry.delta, 0)).toBe(user.credits);
  const rows = await findRows(db, "ledger_entries", { taskId });
  const amount = (kind: LedgerKind) => rows.find((r) => r.kind === kind)?.amount ?? 0;
  expect(amount(LedgerKind.Reserve)).toBe(amount(LedgerKind.Charge) + amount(LedgerKind.Refund));
}

test("completed: charge kept, rest refunded, once even when called concurrently", async () => {
  const { userId, id, task } = await reservedTask(10);
  const outcome = { status: TaskStatus.Completed, output: { image_urls: ["u"] }, charge: 7 };
  const results = await Promise.allSettled([settleTask(db, task, outcome), settleTask(db, task, outcome), settleTask(db, task, outcome)]);
  const settled = results.filter((r) => r.status === "fulfilled" && r.value !== null);
  expect(settled).toHaveLength(1);
  const row = (await findTask(db, id))!;
  expect(row).toMatchObject({ status: TaskStatus.Completed, chargedCredits: 7, refundedCredits: 3 });
  expect(await readCredits(db, userId)).toBe(93);
  await expectInvariant(userId, id);
});

test("failed: full refund, error written; a charge above the reservation is clamped", async () => {
  const a = await reservedTask(5);
  await settleTask(db, a.task, { status: TaskStatus.Failed, code: Wf.UpstreamFailed, charge: 0 });
  expect((await findTask(db, a.id))!).toMatchObject({
    status: TaskStatus.Failed,
    errorCode: Wf.UpstreamFailed,
    chargedCredits: 0,
    refundedCredits: 5,
  });
  await expectInvariant(a.userId, a.id);

  const b = await reservedTask(5);
  await settleTask(db, b.task, { status: TaskStatus.Completed, output: {}, charge: 50, tokens: { input: 1, output: 2 } });
  expect((await findTask(db, b.id))!).toMatchObject({ chargedCredits: 5, refundedCredits: 0, tokensInput: 1, tokensOutput: 2 });
  await expectInvariant(b.userId, b.id);
});

test("a terminal task is left untouched", async () => {
  const { userId, id, task } = await reservedTask(4);
  await settleTask(db, task, { status: TaskStatus.Failed, code: Wf.Canceled, charge: 0 });
  expect(await settleTask(db, task, { status: TaskStatus.Completed, output: {}, charge: 4 })).toBeNull();
  expect((await findTask(db, id))!.status).toBe(TaskStatus.Failed);
  await expectInvariant(userId, id);
});

test("settled twice in a row: charged once, the second call writes nothing and returns null", async () => {
  const { userId, id, task } = await reservedTask(6);
  const outcome = { status: TaskStatus.Completed, output: { image_urls: ["u"] }, charge: 6 };
  const first = await settleTask(db, task, outcome);
  expect(first).toMatchObject({ id, status: TaskStatus.Completed, chargedCredits: 6, refundedCredits: 0 });
  expect(first!.finishedAt).toBeInstanceOf(Date);
  // The row the settlement returns is the task as any read gives it (the hand-off and the cancel answer use it).
  expect(first).toEqual(await findTask(db, id));
  expect(await settleTask(db, task, { status: TaskStatus.Failed, code: Wf.UpstreamFailed, charge: 0 })).toBeNull();
  expect(await countRows(db, "ledger_entries", { taskId: id })).toBe(3);
  expect(await readCredits(db, userId)).toBe(94);
  await expectInvariant(userId, id);
});

test("the worker's completion after the client's cancel changes nothing: the cancel's refund stands", async () => {
  const { userId, id, task } = await reservedTask(8);
  // The gateway's cancel (80008) settles first, with a full refund ...
  expect(await settleTask(db, task, { status: TaskStatus.Failed, code: Wf.Canceled, charge: 0 })).toMatchObject({ errorCode: Wf.Canceled, refundedCredits: 8 });
  // ... then the worker's terminal step for the same task, with the task as it had loaded it.
  expect(await settleTask(db, task, { status: TaskStatus.Completed, output: { image_urls: ["u"] }, charge: 8 })).toBeNull();
  expect((await findTask(db, id))!).toMatchObject({
    status: TaskStatus.Failed,
    errorCode: Wf.Canceled,
    chargedCredits: 0,
    output: null,
  });
  expect(await readCredits(db, userId)).toBe(100);
  await expectInvariant(userId, id);
});

test("one statement: the settlement reads nothing first; a caller's stale reservation closes nothing", async () => {
  const seen: string[] = [];
  const counted = createDatabase(process.env.DATABASE_URL!, { onQuery: (sql) => seen.push(sql) });
  try {
    const { userId, id, task } = await reservedTask(5);
    await settleTask(counted, task, { status: TaskStatus.Completed, output: {}, charge: 3 });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/^\s*WITH closed AS \(\s*UPDATE tasks/);
    // A reservation that is not the row's (never the case for a loaded task: it is fixed at insert) matches nothing.
    const other = await reservedTask(5);
    expect(await settleTask(counted, { id: other.id, reservedCredits: 4 }, { status: TaskStatus.Completed, output: {}, charge: 4 })).toBeNull();
    expect((await findTask(db, other.id))!.status).toBe(TaskStatus.InProgress);
    expect(await countRows(db, "ledger_entries", { taskId: other.id })).toBe(1);
    await expectInvariant(userId, id);
  } finally {
    await counted.$disconnect();
  }
});

test("the settlement leaves a task's webhook delivery alone: it stays pending for the delivery worker's claim", async () => {
  const { userId, id, task } = await reservedTask(4);
  await insertRow(db, "webhook_deliveries", { taskId: id, url: "https://hooks.test.example/h", status: "pending" });
  expect(await settleTask(db, task, { status: TaskStatus.Completed, output: {}, charge: 4 })).not.toBeNull();
  expect(await readDelivery(db, id)).toMatchObject({ status: "pending", attempts: 0 });
  expect(await countRows(db, "webhook_attempts", { taskId: id })).toBe(0);
  await expectInvariant(userId, id);
  await forgetDelivery(id);
});

/** The run's database is shared with the delivery reconciler's tests: a terminal task's pending delivery or open attempt must not be left for them. */
async function forgetDelivery(taskId: string) {
  await deleteRows(db, "webhook_attempts", { taskId });
  await deleteRows(db, "webhook_deliveries", { taskId });
}
