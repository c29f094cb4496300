import request from "supertest";
import { ENDPOINT_PATHS, ENDPOINTS, type Endpoint } from "@gen/catalog";
import { renderTask } from "@gen/task-render";
import { OpenApiDocument } from "./support/openapi-document.ts";
import { createTestGateway, createUser, type TestGateway, type TestUser } from "./support/test-gateway.ts";

let gw: TestGateway;
let limited: TestGateway;
let user: TestUser;
let api: OpenApiDocument;

// What the worker writes as `output` per endpoint (docs/api.md#outputs-per-endpoint).
const OUTPUTS = {
  images: { image_urls: ["http://localhost:8080/cdn/tasks/t/0.png", "http://localhost:8080/cdn/tasks/t/1.png"] },
  videos: { video_urls: ["http://localhost:8080/cdn/tasks/t/0.mp4"] },
  audio: { audio_urls: ["http://localhost:8080/cdn/tasks/t/0.wav"] },
  detect: { ai_probability: 0.42, label: "mixed" },
  humanize: { text: "Plain words." },
  essay: { text: "Bridges join banks.", word_count: 3 },
  moderations: { flagged: true, categories: { violence: true, hate: false }, category_scores: { violence: 0.93, hate: 0.01 } },
} satisfies Record<Endpoint, object>;

beforeAll(async () => {
  gw = await createTestGateway();
  limited = await createTestGateway({ POLL_RATE_PER_SEC: "1", POLL_RATE_BURST: "1" });
  user = await createUser(gw.deps.db, 100_000);
  const res = await request(gw.app).get("/api/v1/openapi.json");
  expect(res.status).toBe(200);
  api = new OpenApiDocument(res.body);
});
afterAll(async () => {
  await gw.close();
  await limited.close();
});

const expectConforms = (res: request.Response, method: string, path: string) => expect(api.check(res, method, path)).toEqual([]);

describe("the served document", () => {
  test("is public JSON, the same on every call, and covers the gateway's catalog", async () => {
    const res = await request(gw.app).get("/api/v1/openapi.json").set("Origin", "https://not-allowed.example");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{24}$/);
    expect(res.body).toEqual(api.doc);
    expect(api.doc.openapi).toBe("3.1.0");
    expect(api.doc.servers).toEqual([{ url: gw.deps.config.baseUrl.replace(/\/+$/, "") }]);
    for (const endpoint of ENDPOINTS) {
      const name = api.doc.paths[ENDPOINT_PATHS[endpoint]].post.requestBody.content["application/json"].schema.$ref.split("/").pop();
      expect(Object.keys(api.doc.components.schemas[name].discriminator.mapping)).toEqual(gw.deps.catalog.modelsFor(endpoint).map((m) => m.id));
    }
    expectConforms(res, "get", "/api/v1/openapi.json");
  });

  test("the checker itself rejects what breaks the document", async () => {
    const res = await request(gw.app).get("/api/v1/account").set("Authorization", user.auth);
    const forged = (body: unknown, headers: Record<string, string> = res.headers as Record<string, string>, status = res.status) =>
      ({ ...res, status, headers, body }) as request.Response;
    expect(api.check(forged({ credits: "many" }), "get", "/api/v1/account")).not.toEqual([]);
    expect(api.check(forged({ credits: 1, extra: true }), "get", "/api/v1/account")).not.toEqual([]);
    expect(api.check(forged({ credits: 1 }, { "content-type": "application/json" }), "get", "/api/v1/account")).not.toEqual([]);
    expect(api.check(forged({ credits: 1 }, undefined, 418), "get", "/api/v1/account")).not.toEqual([]);
    expect(api.check(forged({ credits: 1 }), "get", "/api/v1/account")).toEqual([]);
  });

  test("/docs renders it from assets the gateway serves itself", async () => {
    const page = await request(gw.app).get("/docs");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.length).toBeGreaterThanOrEqual(3);
    for (const source of sources) {
      expect(source.startsWith("/")).toBe(true);
      const asset = await request(gw.app).get(source);
      expect([source, asset.status]).toEqual([source, 200]);
    }
    const init = await request(gw.app).get("/docs/init.js");
    expect(init.text).toContain('"/api/v1/openapi.json"');
    expect(init.text).toContain("validatorUrl: null");
    expect(page.text + init.text).not.toMatch(/https?:\/\//);
    expect((await request(gw.app).get("/docs/assets/nope.js")).status).toBe(404);
  });

  test("/docs and its files carry a strict CSP (scripts from its own files only), nosniff and no framing", async () => {
    for (const path of ["/docs", "/docs/init.js", "/docs/assets/swagger-ui-bundle.js", "/docs/assets/nope.js"]) {
      const res = await request(gw.app).get(path);
      const csp = res.headers["content-security-policy"] ?? "";
      expect([path, csp.split("; ").sort()]).toEqual([
        path,
        expect.arrayContaining(["default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"]),
      ]);
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      expect(res.headers["x-frame-options"]).toBe("DENY");
    }
  });
});

describe("real responses match the document", () => {
  const examples = () =>
    ENDPOINTS.flatMap((endpoint) => {
      const path = ENDPOINT_PATHS[endpoint];
      const media = api.doc.paths[path].post.requestBody.content["application/json"];
      return Object.values(media.examples).map((example: any) => ({
        endpoint,
        path,
        body: example.value as Record<string, unknown>,
        schema: media.schema.$ref as string,
      }));
    });

  test("every documented request example is accepted (202) and answers as documented; then the task at each stage", async () => {
    const cases = examples();
    expect(cases.length).toBe(gw.deps.catalog.models.length);
    for (const { endpoint, path, body, schema } of cases) {
      expect(api.errors(schema, body)).toEqual([]);
      const submitted = await request(gw.app).post(path).set("Authorization", user.auth).send(body);
      expect([path, body.model, submitted.status]).toEqual([path, body.model, 202]);
      expectConforms(submitted, "post", path);
      const id = submitted.body.id as string;

      const queued = await request(gw.app).get(`/api/v1/tasks/${id}?include=webhook,billing`).set("Authorization", user.auth);
      expectConforms(queued, "get", "/api/v1/tasks/{id}");
      expect(Object.keys(queued.body)).toEqual(Object.keys(api.doc.components.schemas.Task.properties));

      await gw.deps.db.task.update({
        where: { id },
        data: {
          status: "completed",
          output: OUTPUTS[endpoint],
          chargedCredits: 1,
          refundedCredits: queued.body.billing.reserved_credits - 1,
          finishedAt: new Date(),
        },
      });
      if (body.webhook_url !== undefined) {
        await gw.deps.db.webhookDelivery.update({
          where: { taskId: id },
          data: { status: "delivered", attempts: 2, responseStatus: 204, lastError: "http_503", lastAttemptAt: new Date(), deliveredAt: new Date() },
        });
      }
      const completed = await request(gw.app).get(`/api/v1/tasks/${id}?include=webhook&include=billing`).set("Authorization", user.auth);
      expect(completed.body.output).toEqual(OUTPUTS[endpoint]);
      expectConforms(completed, "get", "/api/v1/tasks/{id}");
      // A completed task's output must fit the schema of its own endpoint too.
      const endpointTask = api.doc.paths[path].post.responses["202"].content["application/json"].schema.$ref;
      expect(api.errors(endpointTask, completed.body)).toEqual([]);

      const row = await gw.deps.db.task.findUniqueOrThrow({ where: { id } });
      expect(api.errors("#/components/schemas/WebhookPayload", JSON.parse(renderTask(row, { deliveryId: "whd_0123456789abcdef01234567" })))).toEqual([]);
    }
  });

  test("a canceled task, its failed webhook body, and include=webhook without webhook_url", async () => {
    const submitted = await request(gw.app).post("/api/v1/detect").set("Authorization", user.auth).send({ model: "sim-detect-1", text: "cancel me" });
    const canceled = await request(gw.app).post(`/api/v1/tasks/${submitted.body.id}/cancel`).set("Authorization", user.auth);
    expect(canceled.body).toMatchObject({ status: "failed", error: { code: 80008 } });
    expectConforms(canceled, "post", "/api/v1/tasks/{id}/cancel");
    const polled = await request(gw.app).get(`/api/v1/tasks/${submitted.body.id}?include=webhook,billing`).set("Authorization", user.auth);
    expect(polled.body.webhook).toBeNull();
    expectConforms(polled, "get", "/api/v1/tasks/{id}");
    const row = await gw.deps.db.task.findUniqueOrThrow({ where: { id: submitted.body.id } });
    expect(api.errors("#/components/schemas/WebhookPayload", JSON.parse(renderTask(row, { deliveryId: "whd_0123456789abcdef01234567" })))).toEqual([]);
    // Polling never carries the delivery id; the webhook body always does.
    expect(api.errors("#/components/schemas/WebhookPayload", JSON.parse(renderTask(row)))).not.toEqual([]);
  });

  test("the model list and the task list (both pages, and a bad filter)", async () => {
    expectConforms(await request(gw.app).get("/api/v1/models").set("Authorization", user.auth), "get", "/api/v1/models");
    const first = await request(gw.app).get("/api/v1/tasks?limit=1").set("Authorization", user.auth);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    expectConforms(first, "get", "/api/v1/tasks");
    const next = await request(gw.app).get(`/api/v1/tasks?cursor=${first.body.next_cursor}&limit=100`).set("Authorization", user.auth);
    expect(next.body.next_cursor).toBeNull();
    expectConforms(next, "get", "/api/v1/tasks");
    expectConforms(await request(gw.app).get("/api/v1/tasks?limit=101").set("Authorization", user.auth), "get", "/api/v1/tasks");
  });

  test("account, healthz and readyz", async () => {
    expectConforms(await request(gw.app).get("/api/v1/account").set("Authorization", user.auth), "get", "/api/v1/account");
    expectConforms(await request(gw.app).get("/healthz"), "get", "/healthz");
    const ready = await request(gw.app).get("/readyz");
    expect(ready.status).toBe(200);
    expectConforms(ready, "get", "/readyz");
  });

  test("error responses: status, code and headers as documented for the operation", async () => {
    const auth = user.auth;
    const poor = await createUser(gw.deps.db, 0);
    const cases: [request.Test, string, string, number][] = [
      [request(gw.app).post("/api/v1/images/generations").send({ model: "sim-image-1", prompt: "x" }), "post", "/api/v1/images/generations", 10001],
      [request(gw.app).post("/api/v1/images/generations").set("Authorization", "Basic abc").send({}), "post", "/api/v1/images/generations", 10002],
      [
        request(gw.app).post("/api/v1/images/generations").set("Authorization", auth).set("Origin", "https://evil.example").send({}),
        "post",
        "/api/v1/images/generations",
        10006,
      ],
      [request(gw.app).post("/api/v1/essay").set("Authorization", auth).set("Content-Type", "application/json").send("[1]"), "post", "/api/v1/essay", 20001],
      [
        request(gw.app).post("/api/v1/images/generations").set("Authorization", auth).send({ model: "sim-image-1" }),
        "post",
        "/api/v1/images/generations",
        20002,
      ],
      [
        request(gw.app)
          .post("/api/v1/images/generations")
          .set("Authorization", auth)
          .send({ model: "sim-image-1", prompt: "x", webhook_url: "http://10.0.0.1/h" }),
        "post",
        "/api/v1/images/generations",
        20003,
      ],
      [request(gw.app).post("/api/v1/detect").set("Authorization", auth).send({ model: "sim-image-1", text: "x" }), "post", "/api/v1/detect", 20004],
      [
        request(gw.app).post("/api/v1/images/generations").set("Authorization", auth).send({ model: "sim-image-1", prompt: "x", size: "1x1" }),
        "post",
        "/api/v1/images/generations",
        20005,
      ],
      [
        request(gw.app)
          .post("/api/v1/humanize")
          .set("Authorization", auth)
          .set("Content-Type", "application/json")
          .send(`{"model":"sim-humanize-1","text":"${"a".repeat(1_100_000)}"}`),
        "post",
        "/api/v1/humanize",
        20008,
      ],
      [
        request(gw.app).post("/api/v1/audio/generations").set("Authorization", poor.auth).send({ model: "sim-audio-1", prompt: "x" }),
        "post",
        "/api/v1/audio/generations",
        30001,
      ],
      [request(gw.app).get("/api/v1/tasks/task_00000000000000000000000000000000").set("Authorization", auth), "get", "/api/v1/tasks/{id}", 40001],
      [
        request(gw.app).get("/api/v1/tasks/task_00000000000000000000000000000000?include=secrets").set("Authorization", auth),
        "get",
        "/api/v1/tasks/{id}",
        20003,
      ],
      [
        request(gw.app).post("/api/v1/tasks/task_00000000000000000000000000000000/cancel").set("Authorization", auth),
        "post",
        "/api/v1/tasks/{id}/cancel",
        40001,
      ],
      [request(gw.app).get("/api/v1/account").set("Authorization", "Bearer sk_nope"), "get", "/api/v1/account", 10003],
    ];
    for (const [pending, method, path, code] of cases) {
      const res = await pending;
      expect([path, code, res.body?.error?.code]).toEqual([path, code, code]);
      expect(res.body.error.request_id).toBe(res.headers["x-request-id"]);
      expectConforms(res, method, path);
    }
  });

  test("429 carries Retry-After and the RateLimit headers", async () => {
    const someone = await createUser(limited.deps.db, 10);
    let res!: request.Response;
    for (let i = 0; i < 5 && res?.status !== 429; i++) res = await request(limited.app).get("/api/v1/account").set("Authorization", someone.auth);
    expect(res.status).toBe(429);
    expectConforms(res, "get", "/api/v1/account");
  });
});
