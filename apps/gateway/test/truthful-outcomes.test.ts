import pg from "pg";
import request from "supertest";
import { createDatabase, findTask } from "@gen/db";
import { QUEUE_NAMES, createQueue, createRedis, generationJobId } from "@gen/queues";
import { expectError } from "./support/envelope.ts";
import { slowReplyProxy } from "./support/slow-reply-proxy.ts";
import { createTestGateway, createUser, expectLedgerInvariant, snapshot, testDatabase } from "./support/test-gateway.ts";

// Whatever a client is told about a submission is what happened.
const db = testDatabase();
const IMAGES = "/api/v1/images/generations";
const body = { model: "sim-image-1", prompt: "a tree" };
let price: number;

beforeAll(async () => {
  const gw = await createTestGateway();
  const probe = await createUser(db, 10_000);
  const res = await request(gw.app).post(IMAGES).set("Authorization", probe.auth).send(body);
  expect(res.status).toBe(202);
  price = (await findTask(db, res.body.id))!.reservedCredits;
  await gw.close();
});
afterAll(() => db.$disconnect());

test("70002 after a statement that outlives the client's time-out is a true answer: the server rolled it back", async () => {
  const user = await createUser(db, 10_000);
  const gw = await createTestGateway({}, () => ({ db: createDatabase(process.env.DATABASE_URL!, { queryTimeoutMs: 2000 }) }));
  // The test holds the user's row, so the submission's debit waits past the client's 2 s.
  const locker = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await locker.connect();
  try {
    const before = await snapshot(db, user.userId);
    await locker.query("BEGIN");
    await locker.query("SELECT 1 FROM users WHERE id = $1 FOR UPDATE", [user.userId]);
    // The key is checked before the wait: take it outside the lock (the first request resolves it).
    const res = await request(gw.app).post(IMAGES).set("Authorization", user.auth).send(body);
    expectError(res, 503, 70002);
    await locker.query("COMMIT");
    // Had the statement survived on the server, it would commit now that the lock is free.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await snapshot(db, user.userId)).toEqual(before);
  } finally {
    await locker.end();
    await gw.close();
  }
});

test("concurrent requests with one Idempotency-Key and a balance for one task: all get the one task", async () => {
  const user = await createUser(db, price);
  const gw = await createTestGateway();
  const responses = await Promise.all(
    Array.from({ length: 6 }, () => request(gw.app).post(IMAGES).set("Authorization", user.auth).set("Idempotency-Key", "same-key").send(body)),
  );
  expect(responses.map((r) => r.status)).toEqual(Array(6).fill(202));
  expect(new Set(responses.map((r) => r.body.id)).size).toBe(1);
  const after = await snapshot(db, user.userId);
  expect({ credits: after.credits, tasks: after.tasks }).toEqual({ credits: 0, tasks: 1 });
  await expectLedgerInvariant(db, user.userId);
  await gw.close();
});

test("an expired Idempotency-Key reused concurrently: one new task for all of them, charged once", async () => {
  const user = await createUser(db, 2 * price);
  const gw = await createTestGateway();
  const first = await request(gw.app).post(IMAGES).set("Authorization", user.auth).set("Idempotency-Key", "old-key").send(body);
  expect(first.status).toBe(202);
  await db.$kysely
    .updateTable("idempotency_keys")
    .set({ created_at: new Date(Date.now() - 25 * 3600_000) })
    .where("user_id", "=", user.userId)
    .execute();
  const responses = await Promise.all(
    Array.from({ length: 6 }, () => request(gw.app).post(IMAGES).set("Authorization", user.auth).set("Idempotency-Key", "old-key").send(body)),
  );
  expect(responses.map((r) => r.status)).toEqual(Array(6).fill(202));
  const ids = new Set(responses.map((r) => r.body.id));
  expect(ids.size).toBe(1);
  expect(ids.has(first.body.id)).toBe(false);
  const after = await snapshot(db, user.userId);
  expect({ credits: after.credits, tasks: after.tasks }).toEqual({ credits: 0, tasks: 2 });
  await expectLedgerInvariant(db, user.userId);
  await gw.close();
});

test("an enqueue that times out after the job landed and a worker took the task: 202 with the task, not 60002", async () => {
  const user = await createUser(db, 10_000);
  const proxy = await slowReplyProxy(6379);
  const slowRedis = createRedis(`redis://127.0.0.1:${proxy.port}`, "request");
  const gw = await createTestGateway({}, (deps) => ({ generationQueue: createQueue(QUEUE_NAMES.generation, slowRedis, deps.config.queuePrefix) }));
  const watcher = createRedis("redis://127.0.0.1:6379", "request");
  const queue = createQueue(QUEUE_NAMES.generation, watcher, gw.deps.config.queuePrefix);
  try {
    await gw.deps.generationQueue.getJobCounts(); // connected and ready before replies slow down
    proxy.delayMs = 3000; // beyond the gateway's 2 s enqueue bound
    const pending = request(gw.app)
      .post(IMAGES)
      .set("Authorization", user.auth)
      .send(body)
      .then((r) => r);
    // Play the worker: as soon as the job is in Redis, claim its task as the worker does.
    let taskId: string | undefined;
    for (let i = 0; i < 150 && !taskId; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const task = await db.$kysely.selectFrom("tasks").select("id").where("user_id", "=", user.userId).executeTakeFirst();
      if (task && (await queue.getJob(generationJobId(task.id)))) taskId = task.id;
    }
    expect(taskId).toBeDefined();
    await db.$kysely
      .updateTable("tasks")
      .set({ status: "in_progress", started_at: new Date() })
      .where("id", "=", taskId!)
      .where("status", "=", "queued")
      .execute();
    const res = await pending;
    expect(res.status).toBe(202);
    expect(res.body.id).toBe(taskId);
    expect(res.body.status).toBe("in_progress");
    const task = (await findTask(db, taskId!))!;
    expect(task.discardedAt).toBeNull();
    expect((await snapshot(db, user.userId)).credits).toBe(10_000 - task.reservedCredits);
    await expectLedgerInvariant(db, user.userId);
  } finally {
    proxy.delayMs = 0;
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    watcher.disconnect();
    await gw.close();
    slowRedis.disconnect();
    proxy.close();
  }
});
