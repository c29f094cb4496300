import { LedgerKind, TaskStatus } from "@gen/domain";
import { createDatabase, ensureUser, type Database } from "@gen/db";
import { Wf } from "@gen/errors";
import { newTaskId, newUserId } from "@gen/ids";
import { checkLedger, compensateSubmission, grantCredits, reserveTask, settleTask } from "@gen/ledger";
import { createScratchDatabase } from "../../../test/support/scratch-database.ts";

// The check scans whole tables, so it gets a database of its own: a normal run's ledger passes,
// and rows planted behind the ledger's back are each reported.
const scratch = await createScratchDatabase();
const db: Database = createDatabase(scratch.url);
afterAll(async () => {
  await db.$disconnect();
  await scratch.drop();
});

async function userWith(credits: number): Promise<string> {
  const userId = newUserId();
  await ensureUser(db, userId);
  await grantCredits(db, userId, credits);
  return userId;
}

async function reserve(userId: string, price: number, webhookUrl: string | null = null): Promise<{ id: string; reservedCredits: number }> {
  const result = await reserveTask(db, {
    id: newTaskId(),
    userId,
    endpoint: "images",
    model: "sim-image-1",
    input: { prompt: "x" },
    webhookUrl,
    requestId: "req_check",
    billingMethod: "flat",
    price,
  });
  if (!("task" in result)) throw new Error("reservation refused");
  return result.task;
}

test("a normal run passes: reservations, settlements, a cancel, a compensation, a refused reservation", async () => {
  const userId = await userWith(100);
  const completed = await reserve(userId, 10, "https://hooks.example/x");
  await settleTask(db, completed, { status: TaskStatus.Completed, output: { image_urls: ["u"] }, charge: 7 });
  const failed = await reserve(userId, 5);
  await settleTask(db, failed, { status: TaskStatus.Failed, code: Wf.UpstreamFailed, charge: 0 });
  expect(await compensateSubmission(db, (await reserve(userId, 4)).id)).toEqual({ compensated: true });
  await reserve(userId, 3); // still open
  const refused = await reserveTask(db, {
    id: newTaskId(),
    userId,
    endpoint: "images",
    model: "sim-image-1",
    input: {},
    webhookUrl: null,
    requestId: "req_check",
    billingMethod: "flat",
    price: 1000,
  });
  expect(refused).toEqual({ insufficient: { balance: 100 - 7 - 3 } });

  expect(await checkLedger(db)).toEqual([]);
  expect(await checkLedger(db, { userId })).toEqual([]);
});

test("planted violations are found, one line each, and --user narrows the check", async () => {
  const healthy = await userWith(50);
  await reserve(healthy, 5);
  const userId = await userWith(100);
  const open = (await reserve(userId, 10)).id;
  const settledTask = await reserve(userId, 6);
  const settled = settledTask.id;
  await settleTask(db, settledTask, { status: TaskStatus.Completed, output: {}, charge: 6 });

  // A charge on a task still running, a balance changed without a ledger row, and an entry for a task that never existed.
  await db.$kysely.insertInto("ledger_entries").values({ user_id: userId, task_id: open, kind: LedgerKind.Charge, amount: 10, delta: 0 }).execute();
  await db.$kysely.updateTable("users").set({ credits: 1000 }).where("id", "=", userId).execute();
  await db.$kysely
    .insertInto("ledger_entries")
    .values({ user_id: userId, task_id: "task_000000000000000000000000", kind: LedgerKind.Refund, amount: 1, delta: 1 })
    .execute();
  // The settled task's row disagreeing with its ledger.
  await db.$kysely.updateTable("tasks").set({ charged_credits: 5 }).where("id", "=", settled).execute();

  const lines = await checkLedger(db, { userId });
  expect(lines).toEqual([
    expect.stringMatching(new RegExp(`^task ${[open, settled].sort()[0]} `)),
    expect.stringMatching(new RegExp(`^task ${[open, settled].sort()[1]} `)),
    `user ${userId}: credits 1000 != ledger sum ${100 - 10 - 6 + 0 + 1}`,
    expect.stringMatching(/^ledger entry \d+ .*refund names task task_000000000000000000000000, which does not exist$/),
  ]);
  expect(lines.join("\n")).toContain(`task ${open} (user ${userId}): 1 charge and 0 refund entries on an open (queued) task`);
  expect(lines.join("\n")).toContain(`task ${settled} (user ${userId}): the task row says charged 5 and refunded 0, the ledger 6 and 0`);
  expect(await checkLedger(db, { userId: healthy })).toEqual([]);
  expect((await checkLedger(db)).length).toBe(lines.length);
});
