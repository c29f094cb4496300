import request from "supertest";
import { createDatabase } from "@gen/db";
import { hashApiKey, newApiKey } from "@gen/ids";
import { KeyCache } from "../src/services/key-cache.ts";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, revokeKeys, type TestGateway } from "./support/test-gateway.ts";
import { until } from "../../../test/support/until.ts";

// The poll path's two caches (docs/internals.md "Caches in the gateway"): API key → user, kept
// honest by each process's revocation listener, and finished tasks' answers that can never change.
let gw: TestGateway;
let other: TestGateway;
const statements: string[] = [];

beforeAll(async () => {
  gw = await createTestGateway({}, () => ({ db: createDatabase(process.env.DATABASE_URL!, { onQuery: (sql) => statements.push(sql) }) }));
  // A second gateway process of the same deployment: same database, Redis and QUEUE_PREFIX, its own caches.
  other = await createTestGateway({ QUEUE_PREFIX: gw.deps.config.queuePrefix });
});
afterAll(async () => {
  await other.close();
  await gw.close();
});

const body = { model: "sim-image-1", prompt: "cache me", webhook_url: "https://example.com/h" };

async function submitted(auth: string): Promise<string> {
  const res = await request(gw.app).post("/api/v1/images/generations").set("Authorization", auth).send(body);
  expect(res.status).toBe(202);
  return res.body.id as string;
}

/** SQL statements `run` made on `gw`'s database. */
async function sqlOf(run: () => Promise<unknown>): Promise<string[]> {
  statements.length = 0;
  await run();
  return [...statements];
}

test("a cached key makes no key read; revocation shows on the next request on every gateway", async () => {
  const user = await createUser(gw.deps.db);
  const taskId = await submitted(user.auth);
  for (const app of [gw.app, other.app]) expect((await request(app).get(`/api/v1/tasks/${taskId}`).set("Authorization", user.auth)).status).toBe(200);
  const polled = await sqlOf(() => request(gw.app).get(`/api/v1/tasks/${taskId}`).set("Authorization", user.auth));
  expect(polled.some((sql) => /api_keys/i.test(sql))).toBe(false);

  await revokeKeys(user, gw, other);
  for (const app of [gw.app, other.app]) {
    expectError(await request(app).get(`/api/v1/tasks/${taskId}`).set("Authorization", user.auth), 401, 10004);
    expectError(await request(app).post("/api/v1/images/generations").set("Authorization", user.auth).send(body), 401, 10004);
    expectError(await request(app).get("/api/v1/account").set("Authorization", user.auth), 401, 10004);
  }
});

test("a key revoked or deleted by hand in SQL, outside the admin CLI, is refused on every gateway: the api_keys trigger tells them", async () => {
  const revoked = await createUser(gw.deps.db);
  const deleted = await createUser(gw.deps.db);
  for (const user of [revoked, deleted]) {
    for (const app of [gw.app, other.app]) expect((await request(app).get("/api/v1/account").set("Authorization", user.auth)).status).toBe(200);
  }
  expect(await sqlOf(() => request(gw.app).get("/api/v1/account").set("Authorization", revoked.auth))).not.toContainEqual(expect.stringMatching(/api_keys/));
  await gw.deps.db.$sql.query("UPDATE api_keys SET revoked_at = now() WHERE user_id = $1", [revoked.userId]);
  await gw.deps.db.$sql.query("DELETE FROM api_keys WHERE user_id = $1", [deleted.userId]);
  // Each process drops the keys on the notice, which follows the commit by its latency.
  await until(
    () => [gw, other].every((g) => [revoked, deleted].every((u) => g.deps.keyCache.get(hashApiKey(u.apiKey)) === undefined)),
    "every gateway to drop the keys",
  );
  for (const app of [gw.app, other.app]) {
    expectError(await request(app).get("/api/v1/account").set("Authorization", revoked.auth), 401, 10004);
    expectError(await request(app).get("/api/v1/account").set("Authorization", deleted.auth), 401, 10003);
  }
});

test("KeyCache: answers only between resume and suspend, starts empty at each resume, and a revocation notice drops the key and the reads in flight", () => {
  const keys = new KeyCache();
  keys.set("h0", "u0", keys.beginRead());
  expect(keys.get("h0")).toBeUndefined();
  keys.resume();
  keys.set("h1", "u1", keys.beginRead());
  keys.set("h2", "u2", keys.beginRead());
  expect(keys.get("h1")).toBe("u1");
  const inFlight = keys.beginRead();
  keys.revoke("h1");
  keys.set("h3", "u3", inFlight);
  expect([keys.get("h1"), keys.get("h2"), keys.get("h3")]).toEqual([undefined, "u2", undefined]);
  keys.suspend();
  expect(keys.get("h2")).toBeUndefined();
  keys.set("h4", "u4", keys.beginRead());
  keys.resume();
  expect([keys.get("h2"), keys.get("h4")]).toEqual([undefined, undefined]);
});

test("KeyCache entries expire 60 s after their read started, and a reconnect during a read drops it", () => {
  const keys = new KeyCache();
  keys.resume();
  const read = keys.beginRead(1_000);
  keys.set("h1", "u1", read);
  expect(keys.get("h1", 1_000 + 59_999)).toBe("u1");
  expect(keys.get("h1", 1_000 + 60_000)).toBeUndefined();
  const stale = keys.beginRead();
  keys.resume();
  keys.set("h2", "u2", stale);
  expect(keys.get("h2")).toBeUndefined();
});

test("the key cache stays bounded: unknown keys never enter, and 100k valid ones keep at most 10,000", async () => {
  const before = gw.deps.keyCache.size;
  for (let i = 0; i < 50; i++) expectError(await request(gw.app).get("/api/v1/account").set("Authorization", `Bearer ${newApiKey()}`), 401, 10003);
  expect(gw.deps.keyCache.size).toBe(before);
  const keys = new KeyCache();
  keys.resume();
  for (let i = 0; i < 100_000; i++) keys.set(`hash${i}`, "u", keys.beginRead());
  expect(keys.size).toBe(10_000);
  expect(keys.get("hash99999")).toBe("u");
  expect(keys.get("hash0")).toBeUndefined();
});

test("a finished task whose webhook is delivered is answered with zero SQL statements, to its owner only", async () => {
  const user = await createUser(gw.deps.db);
  const stranger = await createUser(gw.deps.db);
  const taskId = await submitted(user.auth);
  await gw.deps.db.$kysely
    .updateTable("tasks")
    .set({
      status: "completed",
      output: JSON.stringify({ image_urls: ["http://cdn/x.png"] }),
      charged_credits: 3,
      refunded_credits: 1,
      finished_at: new Date(),
    })
    .where("id", "=", taskId)
    .execute();
  const at = new Date();
  await gw.deps.db.$kysely
    .insertInto("webhook_attempts")
    .values({
      id: `whd_${taskId.slice(5)}`,
      task_id: taskId,
      attempt_no: 1,
      started_at: at,
      finished_at: at,
      outcome: "delivered",
      response_status: 200,
      duration_ms: 5,
    })
    .execute();
  await gw.deps.db.$kysely
    .updateTable("webhook_deliveries")
    .set({ status: "delivered", attempts: 1, response_status: 200, last_attempt_at: at, delivered_at: at })
    .where("task_id", "=", taskId)
    .execute();

  const paths = [`/api/v1/tasks/${taskId}`, `/api/v1/tasks/${taskId}?include=webhook,billing`];
  const first = await Promise.all(paths.map((path) => request(gw.app).get(path).set("Authorization", user.auth)));
  expect(first[1]!.body.webhook).toMatchObject({ status: "delivered", attempts: 1 });
  for (const [i, path] of paths.entries()) {
    let res!: request.Response;
    expect(await sqlOf(async () => (res = await request(gw.app).get(path).set("Authorization", user.auth)))).toEqual([]);
    expect(res.status).toBe(200);
    expect(res.text).toBe(first[i]!.text);
    // Another user's poll of the cached task answers exactly as for an unknown task.
    expectError(await request(gw.app).get(path).set("Authorization", stranger.auth), 404, 40001);
  }
});

test("a finished task whose webhook is still moving is read afresh on every poll", async () => {
  const user = await createUser(gw.deps.db);
  const taskId = await submitted(user.auth);
  await gw.deps.db.$kysely
    .updateTable("tasks")
    .set({
      status: "failed",
      error_code: 80003,
      error_message: "Upstream returned a terminal failure",
      charged_credits: 0,
      refunded_credits: 4,
      finished_at: new Date(),
    })
    .where("id", "=", taskId)
    .execute();
  const path = `/api/v1/tasks/${taskId}?include=webhook`;
  const pending = await request(gw.app).get(path).set("Authorization", user.auth);
  expect(pending.body.webhook).toMatchObject({ status: "pending", attempts: 0 });

  await gw.deps.db.$kysely
    .updateTable("webhook_deliveries")
    .set({ status: "failed", attempts: 3, response_status: 500, last_error: "http_500", last_attempt_at: new Date() })
    .where("task_id", "=", taskId)
    .execute();
  const failed = await request(gw.app).get(path).set("Authorization", user.auth);
  expect(failed.body.webhook).toMatchObject({ status: "failed", attempts: 3, last_error: "http_500" });
  // A console redelivery can move a failed delivery again: still not cached.
  await gw.deps.db.$kysely.updateTable("webhook_deliveries").set({ status: "in_progress" }).where("task_id", "=", taskId).execute();
  const again = await sqlOf(() => request(gw.app).get(path).set("Authorization", user.auth));
  expect(again.length).toBeGreaterThan(0);
  expect((await request(gw.app).get(path).set("Authorization", user.auth)).body.webhook).toMatchObject({ status: "in_progress" });
  // Without include=webhook the answer of the terminal task cannot change, so it is cached.
  await request(gw.app).get(`/api/v1/tasks/${taskId}`).set("Authorization", user.auth);
  expect(await sqlOf(() => request(gw.app).get(`/api/v1/tasks/${taskId}`).set("Authorization", user.auth))).toEqual([]);
});

test("an open task is never cached", async () => {
  const user = await createUser(gw.deps.db);
  const taskId = await submitted(user.auth);
  expect((await request(gw.app).get(`/api/v1/tasks/${taskId}`).set("Authorization", user.auth)).body.status).toBe("queued");
  await gw.deps.db.$kysely.updateTable("tasks").set({ status: "in_progress", started_at: new Date() }).where("id", "=", taskId).execute();
  expect((await request(gw.app).get(`/api/v1/tasks/${taskId}`).set("Authorization", user.auth)).body.status).toBe("in_progress");
});
