import net from "node:net";
import request from "supertest";
import { createDatabase } from "@gen/db";
import { ApiError } from "@gen/errors";
import { newTaskId } from "@gen/ids";
import { QUEUE_NAMES, createQueue, createRedis } from "@gen/queues";
import { RateLimiter } from "@gen/rate-limit";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, expectLedgerInvariant, snapshot, testDatabase, type TestUser } from "./support/test-gateway.ts";

const db = testDatabase();
const IMAGES = "/api/v1/images/generations";
const body = { model: "sim-image-1", prompt: "a tree" };
let user: TestUser;

beforeAll(async () => {
  user = await createUser(db, 10_000);
});
afterAll(() => db.$disconnect());

/** A TCP server on loopback that accepts connections and never answers: a hung dependency. */
async function silentServer(): Promise<{ port: number; close(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

test("70001 for submissions when Redis is down, before anything is reserved; polls served within a per-process limit", async () => {
  const gw = await createTestGateway({ POLL_RATE_PER_SEC: "1", POLL_RATE_BURST: "3" }, (deps) => {
    const redis = createRedis("redis://127.0.0.1:1", "request");
    return { redis, rateLimiter: new RateLimiter(redis, deps.config.queuePrefix) };
  });
  const before = await snapshot(db, user.userId);
  expectError(await request(gw.app).post(IMAGES).set("Authorization", user.auth).send(body), 503, 70001);
  const task = { id: newTaskId() };
  await db.$kysely
    .insertInto("tasks")
    .values({
      id: task.id,
      user_id: user.userId,
      endpoint: "images",
      model: "sim-image-1",
      status: "queued",
      input: "{}",
      request_id: "req_test",
      reserved_credits: 0,
      billing_method: "fixed",
    })
    .execute();
  const polls = [];
  for (let i = 0; i < 4; i++)
    polls.push(
      await request(gw.app)
        .get(i % 2 ? "/api/v1/account" : `/api/v1/tasks/${task.id}`)
        .set("Authorization", user.auth),
    );
  expect(polls.map((r) => r.status)).toEqual([200, 200, 200, 429]);
  expect(polls[0]!.body.id).toBe(task.id);
  expect(polls[1]!.body.credits).toBe(before.credits);
  expect(polls[0]!.headers["ratelimit-limit"]).toBe("3");
  expect(polls[0]!.headers["ratelimit-remaining"]).toBe("2");
  expectError(polls[3]!, 429, 50001);
  expect(Number(polls[3]!.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  await db.$kysely.deleteFrom("tasks").where("id", "=", task.id).execute();
  expect(await snapshot(db, user.userId)).toEqual(before);
  expect((await request(gw.app).get("/readyz")).body.redis).toBe("unavailable");
  await gw.close();
});

test("70002 when PostgreSQL refuses connections", async () => {
  const gw = await createTestGateway({}, () => ({ db: createDatabase("postgresql://postgres@127.0.0.1:1/none") }));
  const started = Date.now();
  expectError(await request(gw.app).post(IMAGES).set("Authorization", user.auth).send(body), 503, 70002);
  expectError(await request(gw.app).get("/api/v1/account").set("Authorization", user.auth), 503, 70002);
  expect(Date.now() - started).toBeLessThan(5000);
  const ready = await request(gw.app).get("/readyz");
  expect(ready.status).toBe(503);
  expect(ready.body.database).toBe("unavailable");
  await gw.close();
});

test("70002 when PostgreSQL hangs: answered after the 1 s connect bound, not a hang", async () => {
  const hung = await silentServer();
  const gw = await createTestGateway({}, () => ({ db: createDatabase(`postgresql://postgres@127.0.0.1:${hung.port}/none`) }));
  const started = Date.now();
  expectError(await request(gw.app).get("/api/v1/account").set("Authorization", user.auth), 503, 70002);
  expect(Date.now() - started).toBeLessThan(5000);
  await gw.close();
  hung.close();
});

test("60001 when the insert fails: nothing reserved", async () => {
  await db.$sql.query(`
    CREATE OR REPLACE FUNCTION test_fail_insert() RETURNS trigger AS $$
    BEGIN
      IF NEW.input->>'prompt' = 'fail-the-insert' THEN RAISE EXCEPTION 'injected insert failure'; END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql`);
  await db.$sql.query(`CREATE OR REPLACE TRIGGER test_fail_insert BEFORE INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION test_fail_insert()`);
  const gw = await createTestGateway();
  try {
    const before = await snapshot(db, user.userId);
    const res = await request(gw.app).post(IMAGES).set("Authorization", user.auth).send({ model: "sim-image-1", prompt: "fail-the-insert" });
    expectError(res, 500, 60001);
    expect(res.body.error.message).not.toContain("injected");
    expect(await snapshot(db, user.userId)).toEqual(before);
  } finally {
    await db.$sql.query(`DROP TRIGGER IF EXISTS test_fail_insert ON tasks`);
    await gw.close();
  }
});

test("60002 when Redis fails between insert and enqueue: full refund, task not visible", async () => {
  const deadRedis = createRedis("redis://127.0.0.1:1", "request");
  const gw = await createTestGateway({}, (deps) => ({ generationQueue: createQueue(QUEUE_NAMES.generation, deadRedis, deps.config.queuePrefix) }));
  const before = await snapshot(db, user.userId);
  const res = await request(gw.app).post(IMAGES).set("Authorization", user.auth).set("Idempotency-Key", "retry-me").send(body);
  expectError(res, 500, 60002);
  const after = await snapshot(db, user.userId);
  expect(after.credits).toBe(before.credits);
  const hidden = await db.$kysely
    .selectFrom("tasks")
    .select(["id", "reserved_credits as reservedCredits"])
    .where("user_id", "=", user.userId)
    .where("discarded_at", "is not", null)
    .executeTakeFirstOrThrow();
  expectError(await request(gw.app).get(`/api/v1/tasks/${hidden.id}`).set("Authorization", user.auth), 404, 40001);
  const ledger = await db.$kysely.selectFrom("ledger_entries").select(["kind", "amount"]).where("task_id", "=", hidden.id).orderBy("id").execute();
  expect(ledger.map((e) => [e.kind, e.amount])).toEqual([
    ["reserve", hidden.reservedCredits],
    ["refund", hidden.reservedCredits],
    ["charge", 0],
  ]);
  await expectLedgerInvariant(db, user.userId);
  await gw.close();
  deadRedis.disconnect();

  // The key was freed: a retry with the same key once Redis is back creates the task.
  const healthy = await createTestGateway();
  const retry = await request(healthy.app).post(IMAGES).set("Authorization", user.auth).set("Idempotency-Key", "retry-me").send(body);
  expect(retry.status).toBe(202);
  expect(retry.body.id).not.toBe(hidden.id);
  await healthy.close();
});

test("60099 for anything unexpected; the detail stays in the log", async () => {
  const gw = await createTestGateway({}, (deps) => ({
    catalog: {
      ...deps.catalog,
      validate: deps.catalog.validate.bind(deps.catalog),
      price: () => {
        throw new TypeError("secret internal detail");
      },
    },
  }));
  const before = await snapshot(db, user.userId);
  const res = await request(gw.app).post(IMAGES).set("Authorization", user.auth).send(body);
  expectError(res, 500, 60099);
  expect(res.text).not.toContain("secret");
  expect(await snapshot(db, user.userId)).toEqual(before);
  await gw.close();
});

test("ApiError messages are catalog defaults unless given", () => {
  expect(new ApiError(70002).message).toBe("Database unavailable");
  expect(new ApiError(50001).status).toBe(429);
});
