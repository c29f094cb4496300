import request from "supertest";
import { loadConfig } from "@gen/config";
import { createMetrics } from "@gen/metrics";
import { createTestGateway, createUser, type TestGateway, type TestUser } from "./support/test-gateway.ts";

let gw: TestGateway;
let user: TestUser;

const TOKEN = "metrics-token-for-tests-0123456789";
const scrape = (app: TestGateway["app"]) => request(app).get("/metrics").set("Authorization", `Bearer ${TOKEN}`);

beforeAll(async () => {
  gw = await createTestGateway({ METRICS_TOKEN: TOKEN });
  user = await createUser(gw.deps.db);
  // The request connection refuses commands until connected (70001); on a loaded machine that can
  // outlast createUser.
  if (gw.deps.redis.status !== "ready") await new Promise((resolve) => gw.deps.redis.once("ready", resolve));
});
afterAll(() => gw.close());

/** A metric's name as the gateway exports it: with METRICS_PREFIX (gen_ by default). */
const m = (name: string) => `${gw.deps.config.metricsPrefix}${name}`;

const sample = (body: string, name: string, labels: string): number | undefined => {
  const line = body.split("\n").find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.split(" ").pop());
};

test("GET /metrics shows requests by route pattern and status, queue depths, and no raw ids", async () => {
  const submitted = await request(gw.app)
    .post("/api/v1/images/generations")
    .set("Authorization", user.auth)
    .send({ model: "sim-image-1", prompt: "a lighthouse" });
  expect({ status: submitted.status, body: submitted.body }).toMatchObject({ status: 202 });
  const taskId: string = submitted.body.id;
  expect((await request(gw.app).get(`/api/v1/tasks/${taskId}`).set("Authorization", user.auth)).status).toBe(200);
  expect((await request(gw.app).get(`/api/v1/tasks/${taskId}?include=webhook`).set("Authorization", user.auth)).status).toBe(200);
  expect((await request(gw.app).get("/api/v1/tasks/task_00000000000000000000000000000000").set("Authorization", user.auth)).status).toBe(404);
  expect((await request(gw.app).get(`/api/v1/tasks/${taskId}`)).status).toBe(401);
  expect((await request(gw.app).post("/api/v1/images/generations").set("Authorization", user.auth).send({ model: "sim-image-1" })).status).toBe(400);
  expect((await request(gw.app).get(`/api/v1/nothing/${taskId}`)).status).toBe(404);
  expect((await request(gw.app).post(`/api/v1/tasks/${taskId}/cancel`).set("Authorization", user.auth)).status).toBe(200);

  const res = await scrape(gw.app);
  expect(res.status).toBe(200);
  expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
  const body = res.text;

  expect(sample(body, m("http_requests_total"), 'method="POST",route="/api/v1/images/generations",status="202"')).toBe(1);
  expect(sample(body, m("http_requests_total"), 'method="POST",route="/api/v1/images/generations",status="400"')).toBe(1);
  expect(sample(body, m("http_requests_total"), 'method="GET",route="/api/v1/tasks/:id",status="200"')).toBe(2);
  expect(sample(body, m("http_requests_total"), 'method="GET",route="/api/v1/tasks/:id",status="404"')).toBe(1);
  expect(sample(body, m("http_requests_total"), 'method="GET",route="/api/v1/tasks/:id",status="401"')).toBe(1);
  expect(sample(body, m("http_requests_total"), 'method="GET",route="unmatched",status="404"')).toBe(1);
  expect(sample(body, m("http_requests_total"), 'method="POST",route="/api/v1/tasks/:id/cancel",status="200"')).toBe(1);
  expect(sample(body, m("http_request_duration_seconds_count"), 'method="GET",route="/api/v1/tasks/:id",status="200"')).toBe(2);

  // Cancelling settles the task here, in the gateway; it never started, so it is not timed.
  expect(sample(body, m("tasks_finished_total"), 'status="failed",code="80008",endpoint="images",model="sim-image-1",provider="none"')).toBe(1);
  expect(body).not.toContain(`${m("generation_duration_seconds_count")}`);
  expect(body).toMatch(new RegExp(`^${m("build_info")}\\{version="0\\.0\\.0",commit="unknown",node_version="v[\\d.]+"\\} 1$`, "m"));

  // The submitted task's job still waits (the worker drops it on sight): no worker runs here.: no worker runs in this test.
  expect(sample(body, m("queue_jobs"), 'queue="generation",state="waiting"')).toBe(1);
  expect(sample(body, m("queue_jobs"), 'queue="generation",state="active"')).toBe(0);
  expect(sample(body, m("queue_jobs"), 'queue="webhook-delivery",state="delayed"')).toBe(0);
  expect(sample(body, m("queue_jobs"), 'queue="webhook-delivery",state="waiting"')).toBe(0);
  expect(sample(body, m("queue_jobs"), 'queue="maintenance",state="waiting"')).toBeDefined();
  expect(body).toContain("process_resident_memory_bytes");

  expect(body).not.toMatch(/task_[0-9a-f]{32}/);
  expect(body).not.toMatch(/req_[0-9a-f]{24}/);
  expect(body).not.toContain("/api/v1/nothing");

  // The scrape itself is counted on the next one.
  const again = await scrape(gw.app);
  expect(sample(again.text, m("http_requests_total"), 'method="GET",route="/metrics",status="200"')).toBe(1);
});

test("a scrape still answers when a queue's counts do not arrive, without stale queue depths", async () => {
  // A queue whose Redis never answers, as when Redis hangs; the gauge gives up after queueTimeoutMs.
  const hung = { name: "generation", getJobCounts: () => new Promise<Record<string, number>>(() => {}) };
  const stuck = await createTestGateway({ METRICS_TOKEN: TOKEN }, () => ({
    metrics: createMetrics({ queues: [hung], queueTimeoutMs: 200, defaultMetrics: false }),
  }));
  try {
    const res = await scrape(stuck.app);
    expect(res.status).toBe(200);
    expect(res.text).not.toMatch(/^queue_jobs\{/m);
    expect(sample(res.text, "queue_jobs_collect_errors_total", 'queue="generation"')).toBe(1);
  } finally {
    await stuck.close();
  }
});

test("on the API port /metrics needs the token; without METRICS_TOKEN it is not there at all", async () => {
  const missing = await request(gw.app).get("/metrics");
  expect({ status: missing.status, code: missing.body.error?.code }).toEqual({ status: 401, code: 10001 });
  const basic = await request(gw.app).get("/metrics").set("Authorization", "Basic eDp5");
  expect({ status: basic.status, code: basic.body.error?.code }).toEqual({ status: 401, code: 10002 });
  const wrong = await request(gw.app).get("/metrics").set("Authorization", `Bearer ${TOKEN}x`);
  expect({ status: wrong.status, code: wrong.body.error?.code }).toEqual({ status: 401, code: 10003 });
  expect(wrong.text).not.toContain("http_requests_total");

  const plain = await createTestGateway();
  try {
    const res = await request(plain.app).get("/metrics");
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 404, code: 40002 });
  } finally {
    await plain.close();
  }
});

test("METRICS_TOKEN shorter than 16 characters is refused at start-up", () => {
  expect(() => loadConfig({ METRICS_TOKEN: "short" })).toThrow(/METRICS_TOKEN must be at least 16 characters/);
});
