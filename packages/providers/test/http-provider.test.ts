import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { WorkflowError } from "@gen/errors";
import { PolicyViolation, ProviderUnavailableError, UpstreamRejection, createHttpProvider, parseRetryAfter, type ProviderJob } from "../src/index.ts";
import { closeServer, listenOnLoopback } from "./support/loopback-server.ts";

// Protocol edge cases against a scripted server; apps/upstream-sim/test runs the provider against
// the real upstream simulator.
type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

let server: Server;
let base: string;
let handler: Handler;
const seen: Array<{ method: string; url: string; body: string }> = [];

function reply(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, _body, res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
  };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", body });
      handler(req, body, res);
    });
  });
  base = await listenOnLoopback(server);
});

afterAll(() => closeServer(server));

beforeEach(() => {
  seen.length = 0;
});

async function closedPort(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return `http://127.0.0.1:${port}`;
}

const job: ProviderJob = {
  taskId: "task_00000000000000000000000000000001",
  endpoint: "images",
  model: "upstream-image-1",
  upstreamModel: "img-v2",
  params: { prompt: "cat", n: 1 },
};

describe("HTTP provider submit", () => {
  it("posts { model, input, reference } to {base}/v1/jobs and returns the job id", async () => {
    handler = reply(202, { id: "job-1", status: "running" });
    await expect(createHttpProvider({ baseUrl: base }).submit(job)).resolves.toEqual({ upstreamId: "job-1" });
    expect(seen[0]).toMatchObject({ method: "POST", url: "/v1/jobs" });
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({ model: "img-v2", input: { prompt: "cat", n: 1 }, reference: job.taskId });
  });

  it("keeps a path prefix of the base URL", async () => {
    handler = reply(202, { id: "job-2" });
    await createHttpProvider({ baseUrl: `${base}/upstream/` }).submit({ ...job, upstreamModel: undefined });
    expect(seen[0]?.url).toBe("/upstream/v1/jobs");
    expect(JSON.parse(seen[0]?.body ?? "").model).toBe("upstream-image-1");
  });

  it.each([
    [400, { error: { type: "invalid_input", message: "bad n" } }, 80007],
    [400, { error: "invalid_input" }, 80007],
    [413, "", 80007],
    [422, { error: { type: "unprocessable" } }, 80007],
    [404, "", 80001],
    [401, "", 80001],
    [202, { status: "running" }, 80001],
    [200, "not json", 80001],
  ])("maps HTTP %i %j to %i", async (status, body, code) => {
    handler = reply(status, body);
    const error = await createHttpProvider({ baseUrl: base })
      .submit(job)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamRejection);
    expect(error).not.toBeInstanceOf(PolicyViolation);
    expect((error as WorkflowError).code).toBe(code);
  });

  it("keeps what the upstream said for the operator: status, error text, request id", async () => {
    handler = reply(400, { error: { type: "invalid_input", message: "n must be at most 4" } }, { "x-request-id": "req-abc" });
    const error = await createHttpProvider({ baseUrl: base })
      .submit(job)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 80007, upstream: { status: 400, message: "n must be at most 4", requestId: "req-abc" } });
  });

  it.each([
    [429, {}, undefined],
    [429, { "retry-after": "7" }, 7000],
    [503, { "retry-after": "2" }, 2000],
    [500, {}, undefined],
    [502, {}, undefined],
  ])("HTTP %i %j is unavailable (retried by the worker), retryAfterMs %s", async (status, headers, retryAfterMs) => {
    handler = reply(status, { error: { type: "server_error", message: "busy" } }, headers);
    const error = await createHttpProvider({ baseUrl: base })
      .submit(job)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderUnavailableError);
    expect((error as ProviderUnavailableError).retryAfterMs).toBe(retryAfterMs);
    expect((error as ProviderUnavailableError).upstream).toMatchObject({ status, message: "busy" });
  });

  it("reads Retry-After as an HTTP date too", async () => {
    handler = reply(429, "", { "retry-after": new Date(Date.now() + 30_000).toUTCString() });
    const error = (await createHttpProvider({ baseUrl: base })
      .submit(job)
      .catch((e: unknown) => e)) as ProviderUnavailableError;
    expect(error.retryAfterMs).toBeGreaterThan(28_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  it.each([
    [422, { error: { type: "content_policy", message: "no" } }],
    [400, { error: "content_policy" }],
  ])("maps HTTP %i %j to 80006 at the input stage", async (status, body) => {
    handler = reply(status, body);
    const error = await createHttpProvider({ baseUrl: base })
      .submit(job)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PolicyViolation);
    expect(error).toMatchObject({ code: 80006, stage: "input" });
  });

  it("is unavailable on a refused connection (with its code) and on a timeout", async () => {
    const refused = await createHttpProvider({ baseUrl: await closedPort() })
      .submit(job)
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProviderUnavailableError);
    expect(refused).toMatchObject({ upstream: { code: "ECONNREFUSED" } });
    handler = () => {}; // never answers
    await expect(createHttpProvider({ baseUrl: base, timeoutMs: 100 }).submit(job)).rejects.toBeInstanceOf(ProviderUnavailableError);
  });

  it("never retries a submit", async () => {
    handler = reply(503, "");
    await createHttpProvider({ baseUrl: base })
      .submit(job)
      .catch(() => undefined);
    expect(seen).toHaveLength(1);
  });

  it("rejects with the abort reason when the caller aborts, not with a WorkflowError", async () => {
    handler = () => {};
    const controller = new AbortController();
    const pending = createHttpProvider({ baseUrl: base }).submit(job, controller.signal);
    setTimeout(() => controller.abort(new Error("worker stopping")), 20);
    await expect(pending).rejects.toThrow("worker stopping");
  });
});

describe("HTTP provider poll", () => {
  const poll = (body: unknown, status = 200) => {
    handler = reply(status, body);
    return createHttpProvider({ baseUrl: base }).poll("job/1");
  };

  it("gets {base}/v1/jobs/{id} with the id escaped", async () => {
    await poll({ status: "running" });
    expect(seen[0]).toMatchObject({ method: "GET", url: "/v1/jobs/job%2F1" });
  });

  it("maps running and queued to running", async () => {
    await expect(poll({ status: "running" })).resolves.toEqual({ state: "running" });
    await expect(poll({ status: "queued" })).resolves.toEqual({ state: "running" });
  });

  it("maps succeeded to completed with http(s) urls, data and token usage", async () => {
    await expect(
      poll({
        status: "succeeded",
        output: { urls: ["https://cdn.test/a.png", "ftp://x/y", 7, "http://x/b.png"], data: { a: 1 } },
        usage: { input_tokens: 3, output_tokens: 40 },
      }),
    ).resolves.toEqual({ state: "completed", urls: ["https://cdn.test/a.png", "http://x/b.png"], data: { a: 1 }, tokens: { input: 3, output: 40 } });
  });

  it("leaves tokens out when the usage is incomplete or malformed", async () => {
    await expect(poll({ status: "succeeded", output: { urls: [] }, usage: { input_tokens: 3 } })).resolves.toEqual({ state: "completed", urls: [] });
    await expect(poll({ status: "succeeded", output: { urls: [] }, usage: { input_tokens: -1, output_tokens: 1.5 } })).resolves.toEqual({
      state: "completed",
      urls: [],
    });
  });

  it("maps failures: content_policy → 80006 output, invalid_input → 80007, anything else → 80003", async () => {
    await expect(poll({ status: "failed", error: { type: "content_policy", message: "nope" } })).resolves.toEqual({
      state: "failed",
      code: 80006,
      stage: "output",
      message: "nope",
      upstream: { status: 200, message: "nope" },
    });
    await expect(poll({ status: "failed", error: { type: "invalid_input" } })).resolves.toEqual({ state: "failed", code: 80007, upstream: { status: 200 } });
    await expect(poll({ status: "failed", error: { type: "failed", message: "boom" } })).resolves.toEqual({
      state: "failed",
      code: 80003,
      message: "boom",
      upstream: { status: 200, message: "boom" },
    });
    await expect(poll({ status: "failed" })).resolves.toEqual({ state: "failed", code: 80003, upstream: { status: 200 } });
    await expect(poll({ status: "canceled" })).resolves.toMatchObject({ state: "failed", code: 80003 });
  });

  it("maps 404 to 80003: the upstream lost the job", async () => {
    await expect(poll({ error: "not_found" }, 404)).resolves.toMatchObject({ state: "failed", code: 80003 });
  });

  it("a 429 or 503 with Retry-After is unavailable for that long", async () => {
    handler = reply(429, "", { "retry-after": "3" });
    await expect(createHttpProvider({ baseUrl: base }).poll("a")).rejects.toMatchObject({ name: "ProviderUnavailableError", retryAfterMs: 3000 });
    handler = reply(503, "", { "retry-after": "1" });
    await expect(createHttpProvider({ baseUrl: base }).poll("a")).rejects.toMatchObject({ name: "ProviderUnavailableError", retryAfterMs: 1000 });
  });

  it("throws ProviderUnavailableError when there is no usable answer", async () => {
    await expect(poll({}, 500)).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(poll("<html>", 200)).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(poll({ status: "exploded" })).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(createHttpProvider({ baseUrl: await closedPort() }).poll("x")).rejects.toBeInstanceOf(ProviderUnavailableError);
  });
});

describe("HTTP provider cancel", () => {
  it("posts {base}/v1/jobs/{id}/cancel", async () => {
    handler = reply(200, { id: "a", status: "canceled" });
    await createHttpProvider({ baseUrl: base }).cancel("a");
    expect(seen[0]).toMatchObject({ method: "POST", url: "/v1/jobs/a/cancel" });
  });

  it("never rejects", async () => {
    handler = reply(500, "");
    await expect(createHttpProvider({ baseUrl: base }).cancel("a")).resolves.toBeUndefined();
    await expect(createHttpProvider({ baseUrl: await closedPort() }).cancel("a")).resolves.toBeUndefined();
  });
});

describe("Retry-After", () => {
  it.each([
    ["0", 0],
    ["120", 120_000],
    [" 5 ", 5000],
    ["Wed, 21 Oct 2015 07:28:00 GMT", 0],
    ["soon", undefined],
    ["-1", undefined],
    ["1.5", undefined],
    ["", undefined],
  ])("%j is %s ms", (value, ms) => {
    expect(parseRetryAfter(value, Date.parse("2026-01-01T00:00:00Z"))).toBe(ms);
  });

  it("a date in the future is the time until it", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:01:00 GMT", now)).toBe(60_000);
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
