import { LedgerKind, TaskStatus } from "@gen/domain";
import { createDatabase } from "@gen/db";
import { Wf } from "@gen/errors";
import { newTaskId, newUserId } from "@gen/ids";
import { settleTask } from "@gen/ledger";

const db = createDatabase(process.env.DATABASE_URL!);
afterAll(() => db.$disconnect());

async function reservedTask(reserved: number) {
  const userId = newUserId();
  const id = newTaskId();
  await db.$transaction([
    db.user.create({ data: { id: userId, credits: 100 - reserved } }),
    db.ledgerEntry.create({ data: { userId, kind: LedgerKind.Grant, amount: 100, delta: 100 } }),
    db.task.create({
      data: {
        id,
        userId,
        endpoint: "images",
        model: "m",
        status: TaskStatus.InProgress,
        input: {},
        requestId: "req_x",
        billingMethod: "flat",
        reservedCredits: reserved,
      },
    }),
    db.ledgerEntry.create({ data: { userId, taskId: id, kind: LedgerKind.Reserve, amount: reserved, delta: -reserved } }),
  ]);
  return { userId, id };
}

async function expectInvariant(userId: string, taskId: string) {
  const user = await db.user.findUniqueOrThrow({ where: { id: userId } });
  const sum = await db.ledgerEntry.aggregate({ where: { userId }, _sum: { delta: true } });
  expect(sum._sum.delta).toBe(user.credits);
  const rows = await db.ledgerEntry.findMany({ where: { taskId } });
  const amount = (kind: LedgerKind) => rows.find((r) => r.kind === kind)?.amount ?? 0;
  expect(amount(LedgerKind.Reserve)).toBe(amount(LedgerKind.Charge) + amount(LedgerKind.Refund));
}

test("completed: charge kept, rest refunded, once even when called concurrently", async () => {
  const { userId, id } = await reservedTask(10);
  const outcome = { status: TaskStatus.Completed, output: { image_urls: ["u"] }, charge: 7 };
  const results = await Promise.allSettled([settleTask(db, id, outcome), settleTask(db, id, outcome), settleTask(db, id, outcome)]);
  const settled = results.filter((r) => r.status === "fulfilled" && r.value !== null);
  expect(settled).toHaveLength(1);
  const task = await db.task.findUniqueOrThrow({ where: { id } });
  expect(task).toMatchObject({ status: TaskStatus.Completed, chargedCredits: 7, refundedCredits: 3 });
  expect((await db.user.findUniqueOrThrow({ where: { id: userId } })).credits).toBe(93);
  await expectInvariant(userId, id);
});

test("failed: full refund, error written; a charge above the reservation is clamped", async () => {
  const a = await reservedTask(5);
  await settleTask(db, a.id, { status: TaskStatus.Failed, code: Wf.UpstreamFailed, charge: 0 });
  expect(await db.task.findUniqueOrThrow({ where: { id: a.id } })).toMatchObject({
    status: TaskStatus.Failed,
    errorCode: Wf.UpstreamFailed,
    chargedCredits: 0,
    refundedCredits: 5,
  });
  await expectInvariant(a.userId, a.id);

  const b = await reservedTask(5);
  await settleTask(db, b.id, { status: TaskStatus.Completed, output: {}, charge: 50, tokens: { input: 1, output: 2 } });
  expect(await db.task.findUniqueOrThrow({ where: { id: b.id } })).toMatchObject({ chargedCredits: 5, refundedCredits: 0, tokensInput: 1, tokensOutput: 2 });
  await expectInvariant(b.userId, b.id);
});

test("a terminal task is left untouched", async () => {
  const { userId, id } = await reservedTask(4);
  await settleTask(db, id, { status: TaskStatus.Failed, code: Wf.Canceled, charge: 0 });
  expect(await settleTask(db, id, { status: TaskStatus.Completed, output: {}, charge: 4 })).toBeNull();
  expect((await db.task.findUniqueOrThrow({ where: { id } })).status).toBe(TaskStatus.Failed);
  await expectInvariant(userId, id);
});
