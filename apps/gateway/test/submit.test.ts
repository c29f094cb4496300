import request from "supertest";
import { GENERATION_JOB_OPTIONS } from "@gen/queues";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, expectLedgerInvariant, snapshot, type TestGateway, type TestUser } from "./support/test-gateway.ts";
import { findTask, readDelivery } from "@gen/db";

let gw: TestGateway;
let user: TestUser;

beforeAll(async () => {
  gw = await createTestGateway();
  user = await createUser(gw.deps.db, 100_000);
});
afterAll(() => gw.close());

const SUBMISSIONS: [string, Record<string, unknown>][] = [
  ["/api/v1/images/generations", { model: "sim-image-1", prompt: "a red fox" }],
  ["/api/v1/videos/generations", { model: "sim-video-1", prompt: "waves" }],
  ["/api/v1/audio/generations", { model: "sim-audio-1", prompt: "rain" }],
  ["/api/v1/detect", { model: "sim-detect-1", text: "Some text to check." }],
  ["/api/v1/humanize", { model: "sim-humanize-1", text: "It is what it is." }],
  ["/api/v1/essay", { model: "sim-essay-1", prompt: "On bridges" }],
  ["/api/v1/moderations", { model: "sim-moderation-1", input: ["hello", "world"] }],
];

describe("submission", () => {
  test.each(SUBMISSIONS)("%s: 202, Location, body equal to GET, reservation, one job with id = task id", async (path, body) => {
    const before = await snapshot(gw.deps.db, user.userId);
    const res = await request(gw.app).post(path).set("Authorization", user.auth).send(body);
    expect(res.status).toBe(202);
    expect(res.body.id).toMatch(/^task_[0-9a-f]{32}$/);
    expect(res.headers.location).toBe(`/api/v1/tasks/${res.body.id}`);
    // Written without Express's res.send (submission-routes.ts sendAccepted): the same headers.
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(Number(res.headers["content-length"])).toBe(Buffer.byteLength(res.text));
    expect(Object.keys(res.body)).toEqual(["id", "model", "status", "created_at", "output", "usage", "error"]);
    expect(res.body).toMatchObject({ model: body.model, status: "queued", output: null, usage: { credits: 0 }, error: null });
    expect(Number.isInteger(res.body.created_at)).toBe(true);

    const polled = await request(gw.app).get(res.headers.location!).set("Authorization", user.auth);
    expect(polled.status).toBe(200);
    expect(polled.text).toBe(res.text);

    const task = (await findTask(gw.deps.db, res.body.id))!;
    const after = await snapshot(gw.deps.db, user.userId);
    expect(after.credits).toBe(before.credits - task.reservedCredits);
    expect(task.reservedCredits).toBeGreaterThan(0);
    const ledger = await gw.deps.db.$kysely.selectFrom("ledger_entries").select(["kind", "amount", "delta"]).where("task_id", "=", task.id).execute();
    expect(ledger).toMatchObject([{ kind: "reserve", amount: task.reservedCredits, delta: -task.reservedCredits }]);

    const job = await gw.deps.generationQueue.getJob(task.id);
    expect(job?.data).toEqual({ taskId: task.id });
    expect(job?.opts.attempts).toBe(GENERATION_JOB_OPTIONS.attempts);
    await expectLedgerInvariant(gw.deps.db, user.userId);
  });

  test("webhook_url creates a pending webhook object", async () => {
    const res = await request(gw.app)
      .post("/api/v1/images/generations")
      .set("Authorization", user.auth)
      .send({ model: "sim-image-1", prompt: "x", webhook_url: "https://hooks.example.com/t?secret=abc&x=%20y" });
    expect(res.status).toBe(202);
    const polled = await request(gw.app).get(`/api/v1/tasks/${res.body.id}?include=webhook`).set("Authorization", user.auth);
    expect(polled.body.webhook).toEqual({ status: "pending", attempts: 0, response_status: null, last_error: null, last_attempt_at: null, delivered_at: null });
    const row = (await readDelivery(gw.deps.db, res.body.id))!;
    expect(row.url).toBe("https://hooks.example.com/t?secret=abc&x=%20y");
  });
});

describe("Idempotency-Key", () => {
  test("the same key and body returns the original task without a second charge", async () => {
    const key = `k-${Date.now()}`;
    const body = { model: "sim-image-1", prompt: "idempotent", n: 2 };
    const first = await request(gw.app).post("/api/v1/images/generations").set("Authorization", user.auth).set("Idempotency-Key", key).send(body);
    const before = await snapshot(gw.deps.db, user.userId);
    const second = await request(gw.app)
      .post("/api/v1/images/generations")
      .set("Authorization", user.auth)
      .set("Idempotency-Key", key)
      .send({ prompt: "idempotent", n: 2, model: "sim-image-1" });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.body.id).toBe(first.body.id);
    expect(await snapshot(gw.deps.db, user.userId)).toEqual(before);
  });

  test("concurrent requests with one key create one task", async () => {
    const key = `race-${Date.now()}`;
    const before = await snapshot(gw.deps.db, user.userId);
    const responses = await Promise.all(
      Array.from({ length: 6 }, () =>
        request(gw.app).post("/api/v1/detect").set("Authorization", user.auth).set("Idempotency-Key", key).send({ model: "sim-detect-1", text: "same" }),
      ),
    );
    expect(new Set(responses.map((r) => r.status))).toEqual(new Set([202]));
    expect(new Set(responses.map((r) => r.body.id)).size).toBe(1);
    const after = await snapshot(gw.deps.db, user.userId);
    expect(after.tasks).toBe(before.tasks + 1);
  });

  test("the same key with another body is 20003 and changes nothing", async () => {
    const key = `k2-${Date.now()}`;
    await request(gw.app).post("/api/v1/detect").set("Authorization", user.auth).set("Idempotency-Key", key).send({ model: "sim-detect-1", text: "a" });
    const before = await snapshot(gw.deps.db, user.userId);
    const res = await request(gw.app)
      .post("/api/v1/detect")
      .set("Authorization", user.auth)
      .set("Idempotency-Key", key)
      .send({ model: "sim-detect-1", text: "b" });
    expectError(res, 400, 20003);
    expect(res.body.error.message).toMatch(/Idempotency-Key/);
    expect(await snapshot(gw.deps.db, user.userId)).toEqual(before);
  });

  test("another user's key space is separate", async () => {
    const other = await createUser(gw.deps.db, 1000);
    const key = `shared-${Date.now()}`;
    const a = await request(gw.app)
      .post("/api/v1/detect")
      .set("Authorization", user.auth)
      .set("Idempotency-Key", key)
      .send({ model: "sim-detect-1", text: "a" });
    const b = await request(gw.app)
      .post("/api/v1/detect")
      .set("Authorization", other.auth)
      .set("Idempotency-Key", key)
      .send({ model: "sim-detect-1", text: "a" });
    expect(b.body.id).not.toBe(a.body.id);
  });

  test("a key over 255 characters is 20003", async () => {
    const res = await request(gw.app)
      .post("/api/v1/detect")
      .set("Authorization", user.auth)
      .set("Idempotency-Key", "k".repeat(256))
      .send({ model: "sim-detect-1", text: "a" });
    expectError(res, 400, 20003);
  });

  test("an expired key (older than 24 h) starts a new task", async () => {
    const key = `old-${Date.now()}`;
    const first = await request(gw.app)
      .post("/api/v1/detect")
      .set("Authorization", user.auth)
      .set("Idempotency-Key", key)
      .send({ model: "sim-detect-1", text: "a" });
    await gw.deps.db.$kysely
      .updateTable("idempotency_keys")
      .set({ created_at: new Date(Date.now() - 25 * 3600 * 1000) })
      .where("user_id", "=", user.userId)
      .where("key", "=", key)
      .execute();
    const second = await request(gw.app)
      .post("/api/v1/detect")
      .set("Authorization", user.auth)
      .set("Idempotency-Key", key)
      .send({ model: "sim-detect-1", text: "a" });
    expect(second.status).toBe(202);
    expect(second.body.id).not.toBe(first.body.id);
  });
});
