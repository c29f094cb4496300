import { connect, type AddressInfo } from "node:net";
import {
  METRIC_NAMES,
  REPAIR_KINDS,
  createMetrics,
  packageVersion,
  recordReconcilerRepairs,
  recordUpstreamRequest,
  recordHttpRequest,
  recordTaskFinished,
  recordWebhookAttempt,
  recordWebhookDelay,
  renderMetrics,
  serveMetrics,
  type CountableQueue,
} from "../src/index.ts";

// The defaults of HTTP_* (docs/configuration.md).
const HTTP = { headersTimeoutMs: 10_000, requestTimeoutMs: 120_000, keepAliveTimeoutMs: 5000, maxConnections: 10_000 };
const logger = { info: () => {}, warn: () => {}, error: () => {} };

const queue = (name: string, counts: () => Promise<Record<string, number>>): CountableQueue => ({ name, getJobCounts: counts });

test("every metric is declared with its help and type, default metrics included", async () => {
  const { body, contentType } = await renderMetrics(createMetrics());
  expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  for (const name of Object.values(METRIC_NAMES)) expect(body).toContain(`# HELP ${name} `);
  expect(body).toContain("# TYPE http_requests_total counter");
  expect(body).toContain("# TYPE http_request_duration_seconds histogram");
  expect(body).toContain("# TYPE tasks_finished_total counter");
  expect(body).toContain("# TYPE generation_duration_seconds histogram");
  expect(body).toContain("# TYPE webhook_attempts_total counter");
  expect(body).toContain("# TYPE webhook_dispatch_seconds histogram");
  expect(body).toContain("# TYPE queue_jobs gauge");
  expect(body).toContain("process_cpu_user_seconds_total");
  expect(body).toContain("nodejs_eventloop_lag_seconds");
});

test("each call has its own registry", async () => {
  const a = createMetrics({ defaultMetrics: false });
  const b = createMetrics({ defaultMetrics: false });
  recordWebhookAttempt(a, "delivered");
  expect((await renderMetrics(a)).body).toContain('webhook_attempts_total{outcome="delivered"} 1');
  expect((await renderMetrics(b)).body).not.toContain('webhook_attempts_total{outcome="delivered"}');
});

test("delayed attempts by reason; a full cap by its scope", async () => {
  const metrics = createMetrics({ defaultMetrics: false });
  recordWebhookDelay(metrics, "cap", "host");
  recordWebhookDelay(metrics, "cap", "customer");
  recordWebhookDelay(metrics, "cap", "host");
  recordWebhookDelay(metrics, "early");
  recordWebhookDelay(undefined, "early");
  const { body } = await renderMetrics(metrics);
  expect(body).toContain('webhook_attempts_delayed_total{reason="cap"} 3');
  expect(body).toContain('webhook_attempts_delayed_total{reason="early"} 1');
  expect(body).toContain('webhook_cap_full_total{scope="host"} 2');
  expect(body).toContain('webhook_cap_full_total{scope="customer"} 1');
});

test("http requests are counted and timed by method, route pattern and status", async () => {
  const metrics = createMetrics({ defaultMetrics: false });
  recordHttpRequest(metrics, { method: "GET", route: "/api/v1/tasks/:id", status: 200, seconds: 0.02 });
  recordHttpRequest(metrics, { method: "GET", route: "/api/v1/tasks/:id", status: 200, seconds: 0.03 });
  recordHttpRequest(metrics, { method: "GET", route: "unmatched", status: 404, seconds: 0.001 });
  const { body } = await renderMetrics(metrics);
  expect(body).toContain('http_requests_total{method="GET",route="/api/v1/tasks/:id",status="200"} 2');
  expect(body).toContain('http_requests_total{method="GET",route="unmatched",status="404"} 1');
  expect(body).toContain('http_request_duration_seconds_count{method="GET",route="/api/v1/tasks/:id",status="200"} 2');
  expect(body).toContain('http_request_duration_seconds_bucket{le="0.025",method="GET",route="/api/v1/tasks/:id",status="200"} 1');
});

test("task outcomes by status, code, endpoint, model and provider; generation duration by the same", async () => {
  const metrics = createMetrics({ defaultMetrics: false });
  const startedAt = new Date("2026-01-01T00:00:00Z");
  const image = { endpoint: "images", model: "flux-schnell", upstreamProvider: "fal" };
  recordTaskFinished(metrics, { status: "completed", errorCode: null, ...image, startedAt, finishedAt: new Date(startedAt.getTime() + 3000) });
  recordTaskFinished(metrics, { status: "failed", errorCode: 80006, ...image, startedAt, finishedAt: new Date(startedAt.getTime() + 700) });
  // Never started (failed before markStarted could run, no provider took it): counted, not timed.
  const audio = { endpoint: "audio", model: "tts-1", upstreamProvider: null };
  recordTaskFinished(metrics, { status: "failed", errorCode: 80001, ...audio, startedAt: null, finishedAt: new Date() });
  recordTaskFinished(undefined, { status: "failed", errorCode: 80001, ...audio, startedAt: null, finishedAt: null });
  const { body } = await renderMetrics(metrics);
  expect(body).toContain('tasks_finished_total{status="completed",code="none",endpoint="images",model="flux-schnell",provider="fal"} 1');
  expect(body).toContain('tasks_finished_total{status="failed",code="80006",endpoint="images",model="flux-schnell",provider="fal"} 1');
  expect(body).toContain('tasks_finished_total{status="failed",code="80001",endpoint="audio",model="tts-1",provider="none"} 1');
  expect(body).toContain('generation_duration_seconds_count{endpoint="images",model="flux-schnell",provider="fal",status="completed"} 1');
  expect(body).toContain('generation_duration_seconds_sum{endpoint="images",model="flux-schnell",provider="fal",status="failed"} 0.7');
  expect(body).toContain('generation_duration_seconds_bucket{le="1",endpoint="images",model="flux-schnell",provider="fal",status="failed"} 1');
  expect(body).not.toMatch(/generation_duration_seconds_count\{endpoint="audio"/);
});

test("METRICS_PREFIX goes before every name of ours; prom-client's process metrics keep theirs", async () => {
  const { body } = await renderMetrics(createMetrics({ prefix: "acme_" }));
  for (const name of Object.values(METRIC_NAMES)) {
    expect(body).toContain(`# HELP acme_${name} `);
    expect(body).not.toMatch(new RegExp(`^# HELP ${name} `, "m"));
  }
  expect(body).toMatch(/^process_cpu_user_seconds_total /m);
});

test("build_info names the version, the commit when known, and Node.js", async () => {
  const known = await renderMetrics(createMetrics({ defaultMetrics: false, build: { version: "1.2.3", commit: "abc1234" } }));
  expect(known.body).toContain(`build_info{version="1.2.3",commit="abc1234",node_version="${process.version}"} 1`);
  const unknown = await renderMetrics(createMetrics({ defaultMetrics: false }));
  expect(unknown.body).toContain(`build_info{version="unknown",commit="unknown",node_version="${process.version}"} 1`);
  expect(packageVersion(new URL("../package.json", import.meta.url))).toBe("0.0.0");
  expect(packageVersion(new URL("./no-such-package.json", import.meta.url))).toBe("unknown");
});

test("provider calls are timed by provider, operation and status; reconciler repairs counted by kind", async () => {
  const metrics = createMetrics({ defaultMetrics: false });
  recordUpstreamRequest(metrics, { provider: "replicate", operation: "submit", status: "ok", seconds: 0.3 });
  recordUpstreamRequest(metrics, { provider: "replicate", operation: "submit", status: "503", seconds: 0.1 });
  recordUpstreamRequest(metrics, { provider: "fal", operation: "poll", status: "network", seconds: 30 });
  recordUpstreamRequest(undefined, { provider: "fal", operation: "poll", status: "ok", seconds: 1 });
  recordReconcilerRepairs(metrics, REPAIR_KINDS.taskRequeued, 3);
  recordReconcilerRepairs(metrics, REPAIR_KINDS.attemptLost, 0);
  const { body } = await renderMetrics(metrics);
  expect(body).toContain('upstream_request_duration_seconds_count{provider="replicate",operation="submit",status="ok"} 1');
  expect(body).toContain('upstream_request_duration_seconds_count{provider="replicate",operation="submit",status="503"} 1');
  expect(body).toContain('upstream_request_duration_seconds_bucket{le="30",provider="fal",operation="poll",status="network"} 1');
  expect(body).not.toContain('provider="fal",operation="poll",status="ok"');
  expect(body).toContain('reconciler_repairs_total{kind="task_requeued"} 3');
  // A run that repaired nothing still creates the series: its rate reads 0, not "no data".
  expect(body).toContain('reconciler_repairs_total{kind="attempt_lost"} 0');
});

test("webhook attempts by outcome; dispatch latency only when given", async () => {
  const metrics = createMetrics({ defaultMetrics: false });
  recordWebhookAttempt(metrics, "http_503", 0.4);
  recordWebhookAttempt(metrics, "timeout");
  recordWebhookAttempt(metrics, "delivered", 41);
  recordWebhookAttempt(undefined, "delivered", 1);
  const { body } = await renderMetrics(metrics);
  expect(body).toContain('webhook_attempts_total{outcome="http_503"} 1');
  expect(body).toContain('webhook_attempts_total{outcome="timeout"} 1');
  expect(body).toContain('webhook_attempts_total{outcome="delivered"} 1');
  expect(body).toContain("webhook_dispatch_seconds_count 2");
  expect(body).toContain('webhook_dispatch_seconds_bucket{le="0.5"} 1');
  expect(body).toContain('webhook_dispatch_seconds_bucket{le="45"} 2');
});

test("queue depths are read at scrape time; a queue that does not answer in time loses its series", async () => {
  let depth = 3;
  let healthy = true;
  const generation = queue("generation", async () => ({ waiting: depth, active: 1, delayed: 0, failed: 2 }));
  const webhook = queue("webhook-delivery", () => (healthy ? Promise.resolve({ delayed: 5 }) : new Promise(() => {})));
  const metrics = createMetrics({ defaultMetrics: false, queues: [generation, webhook], queueTimeoutMs: 100 });

  let { body } = await renderMetrics(metrics);
  expect(body).toContain('queue_jobs{queue="generation",state="waiting"} 3');
  expect(body).toContain('queue_jobs{queue="generation",state="active"} 1');
  expect(body).toContain('queue_jobs{queue="generation",state="failed"} 2');
  expect(body).toContain('queue_jobs{queue="generation",state="prioritized"} 0');
  expect(body).toContain('queue_jobs{queue="webhook-delivery",state="delayed"} 5');

  depth = 7;
  healthy = false;
  ({ body } = await renderMetrics(metrics));
  expect(body).toContain('queue_jobs{queue="generation",state="waiting"} 7');
  expect(body).not.toContain('queue_jobs{queue="webhook-delivery"');
  expect(body).toContain('queue_jobs_collect_errors_total{queue="webhook-delivery"} 1');
});

test("a rejecting queue does not fail the scrape", async () => {
  const metrics = createMetrics({ defaultMetrics: false, queues: [queue("generation", () => Promise.reject(new Error("Connection is closed.")))] });
  const { body } = await renderMetrics(metrics);
  expect(body).toContain('queue_jobs_collect_errors_total{queue="generation"} 1');
});

test("serveMetrics answers GET /metrics and nothing else", async () => {
  const metrics = createMetrics({ defaultMetrics: false });
  recordWebhookAttempt(metrics, "delivered", 0.2);
  const server = await serveMetrics(metrics, { port: 0, host: "127.0.0.1", http: HTTP, logger });
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await res.text()).toContain('webhook_attempts_total{outcome="delivered"} 1');
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: "POST" })).status).toBe(404);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test("the metrics listener has the HTTP_* limits of every listener: a scraper trickling its headers gets 408 and is closed", async () => {
  const server = await serveMetrics(createMetrics({ defaultMetrics: false }), {
    port: 0,
    host: "127.0.0.1",
    http: { ...HTTP, headersTimeoutMs: 1000 },
    logger,
  });
  try {
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
    let answer = "";
    socket.on("data", (chunk: Buffer) => (answer += chunk.toString("latin1")));
    socket.on("error", () => {});
    const started = performance.now();
    // A byte every 200 ms, never the end of the headers.
    const trickle = setInterval(() => socket.writable && socket.write("X"), 200);
    socket.write("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    await new Promise((resolve) => socket.once("close", resolve));
    clearInterval(trickle);
    console.log(`a trickling scraper was closed after ${(performance.now() - started).toFixed(0)} ms (headers time-out 1000 ms)`);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}, 30_000);
