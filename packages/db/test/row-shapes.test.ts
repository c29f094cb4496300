import { createDatabase, findTask, readDelivery } from "@gen/db";
import { newTaskId, newUserId } from "@gen/ids";
import { insertRow, insertUser, readRow } from "../../../test/support/db-rows.ts";

// The modules' reads of the hot paths give every column of the row, under its camelCase name, with
// the value PostgreSQL holds: a column added to the table and forgotten by a read fails here.
const db = createDatabase(process.env.DATABASE_URL!);
afterAll(() => db.$disconnect());

test("a task and its delivery read by the modules are their rows, every column, camelCase", async () => {
  const userId = newUserId();
  const id = newTaskId();
  await insertUser(db, userId, 5);
  await insertRow(db, "tasks", {
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
  });
  await insertRow(db, "webhook_deliveries", {
    taskId: id,
    url: "https://h.example/x",
    status: "delivered",
    attempts: 2,
    responseStatus: 200,
    lastAttemptAt: new Date(),
    deliveredAt: new Date(),
  });
  expect(await findTask(db, id)).toEqual(await readRow(db, "tasks", { id }));
  const { deliveredBy, ...webhook } = (await readDelivery(db, id))!;
  expect(webhook).toEqual(await readRow(db, "webhook_deliveries", { taskId: id }));
  expect(deliveredBy).toBeNull();
});
