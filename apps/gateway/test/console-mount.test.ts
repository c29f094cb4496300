import request from "supertest";
import { newDeliveryId, newTaskId } from "@gen/ids";
import { signIn, type ConsoleOperatorSession } from "../../console/test/support/console-session.ts";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, type TestGateway, type TestUser } from "./support/test-gateway.ts";

// The console is its own app (apps/console, tested there); this is the gateway's side: it mounts it
// at /console on the API port, and CONSOLE_ON_GATEWAY=false takes it off.
let gw: TestGateway;
let user: TestUser;
let operator: ConsoleOperatorSession;

beforeAll(async () => {
  gw = await createTestGateway();
  user = await createUser(gw.deps.db);
  operator = await signIn(gw);
});
afterAll(() => gw.close());

const decode = (html: string) =>
  html
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

test("sign-in on the gateway's port; the delivery page shows the webhook object exactly as the API returns it", async () => {
  const db = gw.deps.db;
  const taskId = newTaskId();
  const finishedAt = new Date(Date.now() - 60_000);
  await db.$kysely
    .insertInto("tasks")
    .values({
      id: taskId,
      user_id: user.userId,
      endpoint: "images",
      model: "sim-image-1",
      status: "completed",
      input: JSON.stringify({ prompt: "a lighthouse" }),
      output: JSON.stringify({ image_urls: [`https://cdn.example.test/tasks/${taskId}/0.png`] }),
      webhook_url: "https://hooks.example.test/receive?token=secret",
      request_id: "req_000000000000000000000000",
      billing_method: "flat",
      reserved_credits: 4,
      charged_credits: 4,
      started_at: new Date(finishedAt.getTime() - 1_000),
      finished_at: finishedAt,
    })
    .execute();
  await db.$kysely
    .insertInto("webhook_attempts")
    .values({
      id: newDeliveryId(),
      task_id: taskId,
      attempt_no: 1,
      started_at: finishedAt,
      finished_at: new Date(finishedAt.getTime() + 120),
      outcome: "delivered",
      response_status: 204,
      duration_ms: 120,
    })
    .execute();
  await db.$kysely
    .insertInto("webhook_deliveries")
    .values({
      task_id: taskId,
      url: "https://hooks.example.test/receive?token=secret",
      status: "delivered",
      attempts: 1,
      response_status: 204,
      last_attempt_at: finishedAt,
      delivered_at: finishedAt,
    })
    .execute();

  const page = await request(gw.app).get(`/console/deliveries/${taskId}`).set("Accept", "text/html").set("Cookie", operator.cookie).expect(200);
  const api = await request(gw.app).get(`/api/v1/tasks/${taskId}?include=webhook`).set("Authorization", user.auth).expect(200);
  expect(JSON.parse(decode(/<pre id="webhook-object">([\s\S]*?)<\/pre>/.exec(page.text)?.[1] ?? ""))).toEqual(api.body.webhook);
  expect(api.body.webhook).toMatchObject({ status: "delivered", attempts: 1, response_status: 204 });
});

test("CONSOLE_ON_GATEWAY=false: /console is an unknown path on the API port", async () => {
  const off = await createTestGateway({ CONSOLE_ON_GATEWAY: "false" });
  try {
    expectError(await request(off.app).get("/console/sign-in"), 404, 40002);
    expectError(await request(off.app).post("/console/sign-in").type("form").send({ email: "a@b.c", password: "x" }), 404, 40002);
    expect((await request(off.app).get("/healthz")).status).toBe(200);
  } finally {
    await off.close();
  }
});
