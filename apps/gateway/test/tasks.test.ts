import request from "supertest";
import { readCredits } from "@gen/db";
import { newTaskId } from "@gen/ids";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, type TestGateway, type TestUser } from "./support/test-gateway.ts";

let gw: TestGateway;
let user: TestUser;
let other: TestUser;
let queuedId: string;
let hookedId: string;

beforeAll(async () => {
  gw = await createTestGateway();
  user = await createUser(gw.deps.db, 10_000);
  other = await createUser(gw.deps.db, 10_000);
  queuedId = (await request(gw.app).post("/api/v1/images/generations").set("Authorization", user.auth).send({ model: "sim-image-1", prompt: "x" })).body.id;
  hookedId = (
    await request(gw.app)
      .post("/api/v1/images/generations")
      .set("Authorization", user.auth)
      .send({ model: "sim-image-1", prompt: "x", webhook_url: "https://example.com/h" })
  ).body.id;
});
afterAll(() => gw.close());

const get = (path: string, who: TestUser = user) => request(gw.app).get(path).set("Authorization", who.auth);

describe("GET /api/v1/tasks/{id}", () => {
  test("404/40001 for unknown, malformed and other users' ids", async () => {
    expectError(await get(`/api/v1/tasks/${newTaskId()}`), 404, 40001);
    for (const id of ["nope", "task_", "task_XYZ", `${queuedId}0`, "task_%00", "..%2F..%2Fetc"]) {
      expectError(await get(`/api/v1/tasks/${id}`), 404, 40001);
    }
    expectError(await get(`/api/v1/tasks/${queuedId}`, other), 404, 40001);
  });

  test("include=webhook is null without webhook_url; absent without include", async () => {
    expect((await get(`/api/v1/tasks/${queuedId}?include=webhook`)).body.webhook).toBeNull();
    expect((await get(`/api/v1/tasks/${queuedId}`)).body).not.toHaveProperty("webhook");
    expect((await get(`/api/v1/tasks/${hookedId}?include=webhook`)).body.webhook.status).toBe("pending");
  });

  test("include forms and field order", async () => {
    const order = ["id", "model", "status", "created_at", "output", "usage", "error", "webhook", "billing"];
    for (const query of ["include=webhook,billing", "include=billing,webhook", "include=webhook&include=billing", "include=billing&include=webhook,webhook"]) {
      const res = await get(`/api/v1/tasks/${hookedId}?${query}`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(order);
    }
    const billing = (await get(`/api/v1/tasks/${queuedId}?include=billing`)).body.billing;
    expect(Object.keys(billing)).toEqual(["method", "reserved_credits", "charged_credits", "refunded_credits", "tokens"]);
    expect(billing.method).toBe("flat");
    expect(billing.reserved_credits).toBeGreaterThan(0);
  });

  test("20003 for an unknown include value, naming it", async () => {
    for (const query of ["include=secrets", "include=webhook,secrets", "include=webhook&include=bogus", "include=WEBHOOK"]) {
      const res = await get(`/api/v1/tasks/${queuedId}?${query}`);
      expectError(res, 400, 20003);
    }
    expect((await get(`/api/v1/tasks/${queuedId}?include=secrets`)).body.error.message).toContain("secrets");
  });

  test("a failed task is 200 with the error object; a completed task shows output and charge", async () => {
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
      .where("id", "=", queuedId)
      .execute();
    const failed = await get(`/api/v1/tasks/${queuedId}`);
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({
      status: "failed",
      output: null,
      usage: { credits: 0 },
      error: { code: 80003, message: "Upstream returned a terminal failure" },
    });
    expect(Object.keys(failed.body.error)).toEqual(["code", "message"]);

    await gw.deps.db.$kysely
      .updateTable("tasks")
      .set({ status: "completed", output: JSON.stringify({ image_urls: ["http://cdn/x.png"] }), charged_credits: 3, finished_at: new Date() })
      .where("id", "=", hookedId)
      .execute();
    const done = await get(`/api/v1/tasks/${hookedId}`);
    expect(done.body).toMatchObject({ status: "completed", output: { image_urls: ["http://cdn/x.png"] }, usage: { credits: 3 }, error: null });
  });
});

describe("GET /api/v1/account", () => {
  test("returns the balance", async () => {
    const res = await get("/api/v1/account");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ credits: await readCredits(gw.deps.db, user.userId) });
  });
});

describe("unknown routes and health", () => {
  test("40002 for unknown paths and methods under /api/v1", async () => {
    expectError(await get("/api/v1/nothing"), 404, 40002);
    expectError(await request(gw.app).delete(`/api/v1/tasks/${queuedId}`).set("Authorization", user.auth), 404, 40002);
    expectError(await request(gw.app).get("/api/v1/images/generations").set("Authorization", user.auth), 404, 40002);
    expectError(await request(gw.app).get("/nothing"), 404, 40002);
  });

  test("/healthz and /readyz", async () => {
    expect((await request(gw.app).get("/healthz")).body).toEqual({ status: "ok" });
    const ready = await request(gw.app).get("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ready", database: "ok", redis: "ok" });
  });
});
