import request from "supertest";
import { newDeliveryId, newTaskId } from "@gen/ids";
import { signIn, type ConsoleOperatorSession } from "../../console/test/support/console-session.ts";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, type TestGateway, type TestUser } from "./support/test-gateway.ts";
import { prismaOf } from "../../../test/support/prisma-fixtures.ts";

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
  await prismaOf(db).task.create({
    data: {
      id: taskId,
      userId: user.userId,
      endpoint: "images",
      model: "sim-image-1",
      status: "completed",
      input: { prompt: "a lighthouse" },
      output: { image_urls: [`https://cdn.example.test/tasks/${taskId}/0.png`] },
      webhookUrl: "https://hooks.example.test/receive?token=secret",
      requestId: "req_000000000000000000000000",
      billingMethod: "flat",
      reservedCredits: 4,
      chargedCredits: 4,
      startedAt: new Date(finishedAt.getTime() - 1_000),
      finishedAt,
    },
  });
  await prismaOf(db).webhookAttempt.create({
    data: {
      id: newDeliveryId(),
      taskId,
      attemptNo: 1,
      startedAt: finishedAt,
      finishedAt: new Date(finishedAt.getTime() + 120),
      outcome: "delivered",
      responseStatus: 204,
      durationMs: 120,
    },
  });
  await prismaOf(db).webhookDelivery.create({
    data: {
      taskId,
      url: "https://hooks.example.test/receive?token=secret",
      status: "delivered",
      attempts: 1,
      responseStatus: 204,
      lastAttemptAt: finishedAt,
      deliveredAt: finishedAt,
    },
  });

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
