import { createDatabase, findTask, readDelivery } from "@gen/db";
import { newTaskId, newUserId } from "@gen/ids";
import { prismaOf } from "../../../test/support/prisma-fixtures.ts";

// The plain-SQL reads of the hot paths must give exactly what Prisma gives, field for field.
const db = createDatabase(process.env.DATABASE_URL!);
afterAll(() => db.$disconnect());

test("a task and its delivery read by SQL equal Prisma's objects", async () => {
  const userId = newUserId();
  const id = newTaskId();
  await prismaOf(db).user.create({ data: { id: userId, credits: 5 } });
  await prismaOf(db).task.create({
    data: {
      id,
      userId,
      endpoint: "images",
      model: "sim-image-1",
      status: "completed",
      input: { prompt: "x", n: 2 },
      output: { image_urls: ["a"] },
      webhookUrl: "https://h.example/x",
      requestId: "req_1",
      billingMethod: "tokens",
      reservedCredits: 4,
      chargedCredits: 3,
      refundedCredits: 1,
      tokensInput: 10,
      tokensOutput: 20,
      startedAt: new Date(),
      finishedAt: new Date(),
      upstreamId: "up_1",
    },
  });
  await prismaOf(db).webhookDelivery.create({
    data: { taskId: id, url: "https://h.example/x", status: "delivered", attempts: 2, responseStatus: 200, lastAttemptAt: new Date(), deliveredAt: new Date() },
  });
  expect(await findTask(db, id)).toEqual(await prismaOf(db).task.findUnique({ where: { id } }));
  const { deliveredBy, ...webhook } = (await readDelivery(db, id))!;
  expect(webhook).toEqual(await prismaOf(db).webhookDelivery.findUnique({ where: { taskId: id } }));
  expect(deliveredBy).toBeNull();
});
