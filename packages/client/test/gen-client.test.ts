import { readFileSync } from "node:fs";
import { GenApiError, GenClient, GenConnectionError, GenTimeoutError, SDK_VERSION } from "../src/index.ts";
import { envelope, startFakeApi, task, type FakeApi } from "./fake-api.ts";

let api: FakeApi;
let client: GenClient;
const ID = "task_0123456789abcdef0123456789abcdef";

beforeEach(async () => {
  api = await startFakeApi();
  client = new GenClient({
    baseUrl: `${api.baseUrl}/`,
    apiKey: "sk_test",
    retryBackoff: { initialMs: 5, maxMs: 20 },
    pollBackoff: { initialMs: 5, maxMs: 20 },
  });
});
afterEach(() => api.close());

describe("submissions", () => {
  test.each([
    ["images", "/api/v1/images/generations", { model: "sim-image-1", prompt: "p" }],
    ["videos", "/api/v1/videos/generations", { model: "sim-video-1", prompt: "p" }],
    ["audio", "/api/v1/audio/generations", { model: "sim-audio-1", prompt: "p" }],
    ["detect", "/api/v1/detect", { model: "sim-detect-1", text: "t" }],
    ["humanize", "/api/v1/humanize", { model: "sim-humanize-1", text: "t" }],
    ["essay", "/api/v1/essay", { model: "sim-essay-1", prompt: "p" }],
    ["moderations", "/api/v1/moderations", { model: "sim-moderation-1", input: ["a"] }],
  ] as const)("%s posts JSON with auth and a random Idempotency-Key to %s", async (method, path, body) => {
    api.route(`POST ${path}`, [{ status: 202, body: task(ID, "queued") }]);
    const submitted = await (client[method] as (b: unknown) => Promise<{ id: string }>)(body);
    expect(submitted.id).toBe(ID);
    const [req] = api.requests;
    expect(req).toMatchObject({ method: "POST", url: path });
    expect(req!.headers.authorization).toBe("Bearer sk_test");
    expect(req!.headers["content-type"]).toBe("application/json");
    expect(req!.headers["idempotency-key"]).toMatch(/^genc_[0-9a-f-]{36}$/);
    expect(JSON.parse(req!.body)).toEqual(body);
  });

  test("each submission gets its own key; a given key is sent as is", async () => {
    api.route("POST /api/v1/detect", [{ status: 202, body: task(ID, "queued") }]);
    await client.detect({ model: "sim-detect-1", text: "a" });
    await client.detect({ model: "sim-detect-1", text: "a" });
    await client.detect({ model: "sim-detect-1", text: "a" }, { idempotencyKey: "my-key-1" });
    const keys = api.requests.map((r) => r.headers["idempotency-key"]);
    expect(keys[0]).not.toBe(keys[1]);
    expect(keys[2]).toBe("my-key-1");
  });

  test("retries 500/60099, 502, 503, 504 and a dropped connection with the SAME Idempotency-Key", async () => {
    client = new GenClient({ baseUrl: api.baseUrl, apiKey: "sk_test", maxRetries: 5, retryBackoff: { initialMs: 5, maxMs: 20 } });
    api.route("POST /api/v1/images/generations", [
      { status: 500, body: envelope(60099, "Internal error") },
      { status: 502, body: "<html>bad gateway</html>" },
      { status: 0, drop: true },
      { status: 503, body: envelope(70001, "Workflow service unavailable; retry") },
      { status: 504 },
      { status: 202, body: task(ID, "queued") },
    ]);
    const submitted = await client.images({ model: "sim-image-1", prompt: "p" });
    expect(submitted.id).toBe(ID);
    expect(api.requests).toHaveLength(6);
    const keys = new Set(api.requests.map((r) => r.headers["idempotency-key"]));
    expect(keys.size).toBe(1);
    expect(new Set(api.requests.map((r) => r.body)).size).toBe(1);
  });

  test("gives up after maxRetries and throws the last error", async () => {
    client = new GenClient({ baseUrl: api.baseUrl, apiKey: "k", maxRetries: 2, retryBackoff: { initialMs: 1, maxMs: 2 } });
    api.route("POST /api/v1/essay", [{ status: 503, body: envelope(70002, "Database unavailable", "req_last") }]);
    const error = await client.essay({ model: "sim-essay-1", prompt: "p" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GenApiError);
    expect(error).toMatchObject({ status: 503, code: 70002, requestId: "req_last", retryable: true });
    expect(api.requests).toHaveLength(3);
  });

  test("a connection that keeps failing ends in GenConnectionError", async () => {
    client = new GenClient({ baseUrl: api.baseUrl, apiKey: "k", maxRetries: 1, retryBackoff: { initialMs: 1, maxMs: 2 } });
    api.route("POST /api/v1/essay", [{ status: 0, drop: true }]);
    const error = await client.essay({ model: "sim-essay-1", prompt: "p" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GenConnectionError);
    expect((error as GenConnectionError).retryable).toBe(true);
    expect(api.requests).toHaveLength(2);
  });

  test.each([
    [400, 20002, "Required parameter missing: prompt"],
    [401, 10003, "API key invalid"],
    [402, 30001, "Insufficient credits"],
    [404, 40002, "Route not found"],
  ])("never retries %i (%i)", async (status, code, message) => {
    api.route("POST /api/v1/images/generations", [{ status, body: envelope(code, message, "req_abc") }]);
    const error = await client.images({ model: "sim-image-1", prompt: "" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GenApiError);
    expect(error).toMatchObject({ status, code, message, requestId: "req_abc", retryable: false });
    expect(api.requests).toHaveLength(1);
  });

  test("honours Retry-After on 429 before retrying", async () => {
    api.route("POST /api/v1/detect", [
      { status: 429, body: envelope(50001, "Rate limit exceeded"), headers: { "Retry-After": "1" } },
      { status: 202, body: task(ID, "queued") },
    ]);
    await client.detect({ model: "sim-detect-1", text: "t" });
    expect(api.requests).toHaveLength(2);
    // The retry backoff is 5-20 ms here, so only Retry-After explains a ~1 s gap.
    expect(api.requests[1]!.at - api.requests[0]!.at).toBeGreaterThanOrEqual(900);
    expect(api.requests[1]!.headers["idempotency-key"]).toBe(api.requests[0]!.headers["idempotency-key"]);
  });

  test("an abort signal stops a pending retry", async () => {
    api.route("POST /api/v1/detect", [{ status: 429, body: envelope(50001, "slow down"), headers: { "Retry-After": "30" } }]);
    const controller = new AbortController();
    const pending = client.detect({ model: "sim-detect-1", text: "t" }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("stop")), 50);
    await expect(pending).rejects.toThrow("stop");
  });
});

describe("errors", () => {
  test("requestId falls back to X-Request-Id when there is no envelope", async () => {
    api.route(`GET /api/v1/tasks/${ID}`, [{ status: 502, body: "<html>" }]);
    client = new GenClient({ baseUrl: api.baseUrl, apiKey: "k", maxRetries: 0 });
    const error = (await client.getTask(ID).catch((e: unknown) => e)) as GenApiError;
    expect(error).toBeInstanceOf(GenApiError);
    expect(error.code).toBeNull();
    expect(error.status).toBe(502);
    expect(error.requestId).toMatch(/^req_\d{24}$/);
    expect(error.message).toContain("502");
  });

  test("404 40001 from getTask", async () => {
    api.route(`GET /api/v1/tasks/${ID}`, [{ status: 404, body: envelope(40001, "Task not found", "req_404") }]);
    await expect(client.getTask(ID)).rejects.toMatchObject({ name: "GenApiError", status: 404, code: 40001, requestId: "req_404" });
  });
});

describe("reads", () => {
  test("getTask sends include as one comma list", async () => {
    api.route(`GET /api/v1/tasks/${ID}`, () => ({ status: 200, body: task(ID, "completed", { webhook: null, billing: { method: "flat" } }) }));
    const got = await client.getTask(ID, { include: ["webhook", "billing"] });
    expect(got.billing).toEqual({ method: "flat" });
    expect(api.requests[0]!.url).toBe(`/api/v1/tasks/${ID}?include=webhook,billing`);
    await client.getTask(ID);
    expect(api.requests[1]!.url).toBe(`/api/v1/tasks/${ID}`);
    expect(api.requests[1]!.headers["idempotency-key"]).toBeUndefined();
  });

  test("cancel and account", async () => {
    api.route(`POST /api/v1/tasks/${ID}/cancel`, [{ status: 200, body: task(ID, "failed", { error: { code: 80008, message: "Task canceled" } }) }]);
    api.route("GET /api/v1/account", [{ status: 200, body: { credits: 42 } }]);
    expect((await client.cancel(ID)).error?.code).toBe(80008);
    expect(await client.account()).toEqual({ credits: 42 });
  });
});

describe("waitForTask", () => {
  test("polls until terminal, riding out 429 (Retry-After) and 503", async () => {
    api.route(`GET /api/v1/tasks/${ID}`, [
      { status: 200, body: task(ID, "queued") },
      { status: 429, body: envelope(50001, "Rate limit exceeded"), headers: { "Retry-After": "1" } },
      { status: 200, body: task(ID, "in_progress") },
      { status: 503, body: envelope(70002, "Database unavailable") },
      { status: 502 },
      { status: 200, body: task(ID, "completed") },
    ]);
    const done = await client.waitForTask(ID, { timeoutMs: 10_000 });
    expect(done.status).toBe("completed");
    expect(api.requests).toHaveLength(6);
    expect(api.requests[2]!.at - api.requests[1]!.at).toBeGreaterThanOrEqual(900);
  });

  test("returns a failed task rather than throwing", async () => {
    api.route(`GET /api/v1/tasks/${ID}`, [{ status: 200, body: task(ID, "failed", { error: { code: 80003, message: "upstream failed" } }) }]);
    const done = await client.waitForTask({ id: ID });
    expect(done.error?.code).toBe(80003);
  });

  test("poll intervals grow from the initial value up to the cap", async () => {
    client = new GenClient({ baseUrl: api.baseUrl, apiKey: "k", pollBackoff: { initialMs: 10, maxMs: 160 } });
    api.route(`GET /api/v1/tasks/${ID}`, [...Array(6).fill({ status: 200, body: task(ID, "in_progress") }), { status: 200, body: task(ID, "completed") }]);
    await client.waitForTask(ID);
    const gaps = api.requests.slice(1).map((r, i) => r.at - api.requests[i]!.at);
    // 10, 20, 40, 80, 160, 160 ms: the first gap is far below the capped ones.
    expect(gaps[0]).toBeLessThan(gaps[4]!);
    expect(gaps[5]).toBeGreaterThanOrEqual(100);
    expect(Math.max(...gaps)).toBeLessThan(1000);
  });

  test("GenTimeoutError when still running at the deadline", async () => {
    api.route(`GET /api/v1/tasks/${ID}`, [{ status: 200, body: task(ID, "in_progress") }]);
    const error = await client.waitForTask(ID, { timeoutMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GenTimeoutError);
    expect(error).toMatchObject({ taskId: ID, lastStatus: "in_progress" });
  });

  test("a 404 ends the wait at once", async () => {
    api.route(`GET /api/v1/tasks/${ID}`, [{ status: 404, body: envelope(40001, "Task not found") }]);
    await expect(client.waitForTask(ID, { timeoutMs: 5000 })).rejects.toMatchObject({ code: 40001 });
    expect(api.requests).toHaveLength(1);
  });

  test("an abort signal ends the wait", async () => {
    api.route(`GET /api/v1/tasks/${ID}`, [{ status: 200, body: task(ID, "in_progress") }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("aborted by test")), 50);
    await expect(client.waitForTask(ID, { signal: controller.signal })).rejects.toThrow("aborted by test");
  });
});

describe("run", () => {
  test("submits once, then polls until terminal, waiting Retry-After on a 429", async () => {
    api.route("POST /api/v1/detect", [{ status: 202, body: task(ID, "queued") }]);
    api.route(`GET /api/v1/tasks/${ID}`, [
      { status: 200, body: task(ID, "in_progress") },
      { status: 429, body: envelope(50001, "Rate limit exceeded"), headers: { "Retry-After": "1" } },
      { status: 200, body: task(ID, "completed", { output: { ai_probability: 0.2, label: "human" } }) },
    ]);
    const done = await client.run("detect", { model: "sim-detect-1", text: "t" }, { timeoutMs: 10_000 });
    expect(done.output?.label).toBe("human");
    expect(api.requests.map((r) => `${r.method} ${r.url}`)).toEqual(["POST /api/v1/detect", ...Array(3).fill(`GET /api/v1/tasks/${ID}`)]);
    expect(api.requests[3]!.at - api.requests[2]!.at).toBeGreaterThanOrEqual(900);
  });

  test("a task already terminal at submission is returned without a poll", async () => {
    api.route("POST /api/v1/images/generations", [{ status: 202, body: task(ID, "completed") }]);
    expect((await client.run("images", { model: "sim-image-1", prompt: "p" })).status).toBe("completed");
    expect(api.requests).toHaveLength(1);
  });
});

describe("discovery and identity", () => {
  test("every request carries the SDK's User-Agent with its version, after the application's own token", async () => {
    const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
    expect(SDK_VERSION).toBe(version);
    api.route("GET /api/v1/account", [{ status: 200, body: { credits: 1 } }]);
    await client.account();
    await new GenClient({ baseUrl: api.baseUrl, apiKey: "k", userAgent: "my-app/2.1" }).account();
    expect(api.requests[0]!.headers["user-agent"]).toBe(`gen-client/${version} node/${process.versions.node}`);
    expect(api.requests[1]!.headers["user-agent"]).toBe(`my-app/2.1 gen-client/${version} node/${process.versions.node}`);
  });

  test("models() returns the list's data", async () => {
    api.route("GET /api/v1/models", [{ status: 200, body: { data: [{ id: "sim-image-1" }] } }]);
    expect((await client.models()).map((m) => m.id)).toEqual(["sim-image-1"]);
  });

  test("listTasks sends only the filters given; iterateTasks follows next_cursor to the end", async () => {
    const other = "task_fedcba9876543210fedcba9876543210";
    api.route("GET /api/v1/tasks", (req) =>
      req.url.includes("cursor=c1")
        ? { status: 200, body: { data: [task(other, "failed")], next_cursor: null } }
        : { status: 200, body: { data: [task(ID, "completed")], next_cursor: "c1" } },
    );
    const page = await client.listTasks({ status: "completed", limit: 1, created_after: 1_700_000_000, model: undefined });
    expect(page.next_cursor).toBe("c1");
    expect(api.requests[0]!.url).toBe("/api/v1/tasks?status=completed&limit=1&created_after=1700000000");
    const ids: string[] = [];
    for await (const t of client.iterateTasks({ endpoint: "images" })) ids.push(t.id);
    expect(ids).toEqual([ID, other]);
    expect(api.requests.slice(1).map((r) => r.url)).toEqual(["/api/v1/tasks?endpoint=images", "/api/v1/tasks?endpoint=images&cursor=c1"]);
  });
});
