import { createDatabase } from "@gen/db";
import { newTaskId, newUserId } from "@gen/ids";
import { settleTask } from "@gen/ledger";

const db = createDatabase(process.env.DATABASE_URL!);
afterAll(() => db.$disconnect());

async function reservedTask(reserved: number) {
  const userId = newUserId();
  const id = newTaskId();
  await db.$transaction([
    db.user.create({ data: { id: userId, credits: 100 - reserved } }),
    db.ledgerEntry.create({ data: { userId, kind: "grant", amount: 100, delta: 100 } }),
    db.task.create({ data: { id, userId, endpoint: "images", model: "m", status: "in_progress", input: {}, requestId: "req_x", billingMethod: "flat", reservedCredits: reserved } }),
    db.ledgerEntry.create({ data: { userId, taskId: id, kind: "reserve", amount: reserved, delta: -reserved } }),
  ]);
  return { userId, id };
}

async function expectInvariant(userId: string, taskId: string) {
  const user = await db.user.findUniqueOrThrow({ where: { id: userId } });
  const sum = await db.ledgerEntry.aggregate({ where: { userId }, _sum: { delta: true } });
  expect(sum._sum.delta).toBe(user.credits);
  const rows = await db.ledgerEntry.findMany({ where: { taskId } });
  const amount = (kind: string) => rows.find((r) => r.kind === kind)?.amount ?? 0;
  expect(amount("reserve")).toBe(amount("charge") + amount("refund"));
}

test("completed: charge kept, rest refunded, once even when called concurrently", async () => {
  const { userId, id } = await reservedTask(10);
  const outcome = { status: "completed" as const, output: { image_urls: ["u"] }, charge: 7 };
  const results = await Promise.allSettled([settleTask(db, id, outcome), settleTask(db, id, outcome), settleTask(db, id, outcome)]);
  const settled = results.filter((r) => r.status === "fulfilled" && r.value !== null);
  expect(settled).toHaveLength(1);
  const task = await db.task.findUniqueOrThrow({ where: { id } });
  expect(task).toMatchObject({ status: "completed", chargedCredits: 7, refundedCredits: 3 });
  expect((await db.user.findUniqueOrThrow({ where: { id: userId } })).credits).toBe(93);
  await expectInvariant(userId, id);
});

test("failed: full refund, error written; a charge above the reservation is clamped", async () => {
  const a = await reservedTask(5);
  await settleTask(db, a.id, { status: "failed", code: 80003, charge: 0 });
  expect(await db.task.findUniqueOrThrow({ where: { id: a.id } })).toMatchObject({ status: "failed", errorCode: 80003, chargedCredits: 0, refundedCredits: 5 });
  await expectInvariant(a.userId, a.id);

  const b = await reservedTask(5);
  await settleTask(db, b.id, { status: "completed", output: {}, charge: 50, tokens: { input: 1, output: 2 } });
  expect(await db.task.findUniqueOrThrow({ where: { id: b.id } })).toMatchObject({ chargedCredits: 5, refundedCredits: 0, tokensInput: 1, tokensOutput: 2 });
  await expectInvariant(b.userId, b.id);
});

test("a terminal task is left untouched", async () => {
  const { userId, id } = await reservedTask(4);
  await settleTask(db, id, { status: "failed", code: 80008, charge: 0 });
  expect(await settleTask(db, id, { status: "completed", output: {}, charge: 4 })).toBeNull();
  expect((await db.task.findUniqueOrThrow({ where: { id } })).status).toBe("failed");
  await expectInvariant(userId, id);
});
