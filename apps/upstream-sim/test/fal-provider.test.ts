import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import {
  FalWebhookStatus,
  PolicyViolation,
  ProviderUnavailableError,
  UpstreamRejection,
  createFalProvider,
  type Provider,
  type ProviderJob,
  type ProviderOptions,
  type ProviderResult,
} from "@gen/providers";
import { createUpstreamSim } from "../src/index.ts";

// The fal adapter, through fal's own client, against the fal wire simulator on loopback: every
// mapping of fal's queue answers to ours. A recorder in front of the simulator sees each request
// the client makes, which shows the client's own retries never run.
const KEY = "test-key-id:test-key-secret";
const IMAGE_MODEL = "fal-ai/flux/schnell";
const VIDEO_MODEL = "fal-ai/kling-video/v2/master/image-to-video";
const AUDIO_MODEL = "fal-ai/playai/tts/v3";

interface Seen {
  method: string;
  url: string;
  authorization?: string;
  body?: unknown;
}

let server: Server;
let base: string;
let seen: Seen[] = [];
let provider: Provider;

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const listening = createServer(handler).listen(0, "127.0.0.1");
  await new Promise((resolve) => listening.once("listening", resolve));
  return { server: listening, url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}` };
}

async function close(target: Server): Promise<void> {
  target.closeAllConnections();
  await new Promise((resolve) => target.close(resolve));
}

function falProvider(options: Partial<ProviderOptions> = {}): Provider {
  return createFalProvider({ baseUrl: `${base}/fal`, apiKey: KEY, timeoutMs: 5000, ...options });
}

beforeAll(async () => {
  const recorder = express();
  recorder.use(express.json({ limit: "4mb" }));
  recorder.use((req, _res, next) => {
    seen.push({ method: req.method, url: req.originalUrl, authorization: req.get("authorization"), body: req.body as unknown });
    next();
  });
  recorder.use(createUpstreamSim());
  ({ server, url: base } = await listen(recorder));
  provider = falProvider();
});

afterAll(() => close(server));

beforeEach(() => {
  seen = [];
});

function job(prompt: string, extra: Partial<ProviderJob> = {}, params: Record<string, unknown> = {}): ProviderJob {
  return {
    taskId: "task_00000000000000000000000000000003",
    endpoint: "images",
    model: "fal-image",
    upstreamModel: IMAGE_MODEL,
    params: { prompt, ...params },
    ...extra,
  };
}

async function settle(upstreamId: string, using: Provider = provider, limitMs = 5000): Promise<ProviderResult> {
  const started = Date.now();
  for (;;) {
    const result = await using.poll(upstreamId);
    if (result.state !== "running" || Date.now() - started > limitMs) return result;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error("resolved"),
    (error: unknown) => error,
  );
}

async function download(url: string): Promise<{ type: string | null; data: Buffer }> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return { type: response.headers.get("content-type"), data: Buffer.from(await response.arrayBuffer()) };
}

describe("fal adapter ↔ fal simulator", () => {
  it("images: num_images and image_size from n and size, the Key header, URLs of real PNG files", async () => {
    const submitted = await provider.submit(job("a harbour at night", {}, { n: 2, size: "512x512", model: "fal-image" }));
    expect(submitted.upstreamId).toMatch(/^fal-ai\/flux\/schnell\/requests\/[0-9a-f-]{36}$/);
    expect(submitted.callback).toBeUndefined();
    expect(seen[0]).toMatchObject({
      method: "POST",
      url: "/fal/fal-ai/flux/schnell",
      authorization: `Key ${KEY}`,
      body: { prompt: "a harbour at night", num_images: 2, image_size: { width: 512, height: 512 } },
    });
    const result = await settle(submitted.upstreamId);
    if (result.state !== "completed") throw new Error(JSON.stringify(result));
    expect(result.urls).toHaveLength(2);
    // Status, result and cancel are addressed by the app (owner/alias), as fal's client builds them.
    expect(seen.map((s) => `${s.method} ${s.url.split("?")[0]}`)).toContain(`GET /fal/fal-ai/flux/requests/${submitted.upstreamId.split("/").at(-1)}/status`);
    for (const url of result.urls ?? []) {
      const { type, data } = await download(url);
      expect(type).toBe("image/png");
      expect([data.readUInt32BE(16), data.readUInt32BE(20)]).toEqual([512, 512]);
    }
  });

  it("the catalog's input map and constant input win over the defaults; fal's own size names pass as they are", async () => {
    await provider.submit(
      job("x", { inputMap: { n: null }, constantInput: { image_size: "square_hd", enable_safety_checker: true } }, { n: 3, size: "64x64" }),
    );
    expect(seen[0]?.body).toEqual({ prompt: "x", image_size: "square_hd", enable_safety_checker: true });
  });

  it("videos: image_url and duration go to the model, video.url comes back", async () => {
    const video = job("a wave", { endpoint: "videos", upstreamModel: VIDEO_MODEL }, { image_url: "https://cdn.example/ref.png", duration_seconds: 2 });
    const { upstreamId } = await provider.submit(video);
    expect(seen[0]?.body).toEqual({ prompt: "a wave", image_url: "https://cdn.example/ref.png", duration: "2" });
    const result = await settle(upstreamId);
    if (result.state !== "completed") throw new Error(JSON.stringify(result));
    expect(result.urls).toHaveLength(1);
    expect((await download(result.urls![0]!)).type).toMatch(/^video\//);
  });

  it("audio: text to speech, audio.url comes back", async () => {
    const speech: ProviderJob = {
      taskId: "task_1",
      endpoint: "audio",
      model: "fal-tts",
      upstreamModel: AUDIO_MODEL,
      params: { text: "hello there", voice: "Jennifer" },
    };
    const { upstreamId } = await provider.submit(speech);
    expect(seen[0]?.body).toEqual({ text: "hello there", voice: "Jennifer" });
    const result = await settle(upstreamId);
    if (result.state !== "completed") throw new Error(JSON.stringify(result));
    expect((await download(result.urls![0]!)).type).toMatch(/^audio\//);
  });

  it("the upstream id alone lets another worker's provider find the request (after a crash)", async () => {
    const { upstreamId } = await provider.submit(job("a kite [[up:delay_ms=100]]"));
    expect(await falProvider().poll(upstreamId)).toEqual({ state: "running" });
    expect(await settle(upstreamId, falProvider())).toMatchObject({ state: "completed", urls: [expect.any(String)] });
  });

  it("80007: a 422 validation answer at submit, with fal's words kept for the operator", async () => {
    const error = await rejection(provider.submit(job("[[up:reject]]")));
    expect(error).toBeInstanceOf(UpstreamRejection);
    expect(error).toMatchObject({ code: 80007, upstream: { status: 422, message: "The input was rejected" } });
    expect(seen).toHaveLength(1);
  });

  it("80006 input: a 422 content_policy_violation at submit", async () => {
    const error = await rejection(provider.submit(job("[[up:policy_input]]")));
    expect(error).toBeInstanceOf(PolicyViolation);
    expect(error).toMatchObject({ code: 80006, stage: "input", upstream: { status: 422 } });
  });

  it("80006 output: every image flagged by the safety checker, or a content_policy_violation result", async () => {
    const image = await provider.submit(job("[[up:policy_output]]", {}, { n: 2 }));
    expect(await settle(image.upstreamId)).toMatchObject({ state: "failed", code: 80006, stage: "output" });
    const video = await provider.submit(job("[[up:policy_output]]", { endpoint: "videos", upstreamModel: VIDEO_MODEL }));
    expect(await settle(video.upstreamId)).toMatchObject({ state: "failed", code: 80006, stage: "output", upstream: { status: 422 } });
  });

  it("80003: a request that failed (its result answers 500), with the cause", async () => {
    const { upstreamId } = await provider.submit(job("[[up:fail]]"));
    expect(await settle(upstreamId)).toMatchObject({ state: "failed", code: 80003, upstream: { status: 500, message: "Simulated generation failure" } });
  });

  it("no output: a completed result without media is completed with no URLs (the worker's 80004)", async () => {
    const { upstreamId } = await provider.submit(job("[[up:no_urls]]"));
    expect(await settle(upstreamId)).toEqual({ state: "completed", urls: [] });
  });

  it("429 with Retry-After at submit: ProviderUnavailableError with retryAfterMs, one request; the retry then succeeds", async () => {
    const throttled = job("busy [[up:submit_429=1]]");
    const error = await rejection(provider.submit(throttled));
    expect(error).toBeInstanceOf(ProviderUnavailableError);
    expect(error).toMatchObject({ retryAfterMs: 1000, upstream: { status: 429, message: "Rate limit exceeded" } });
    expect(seen).toHaveLength(1);
    const { upstreamId } = await provider.submit(throttled);
    expect(await settle(upstreamId)).toMatchObject({ state: "completed" });
  });

  it("5xx at submit and at a status poll: ProviderUnavailableError, never retried by the client", async () => {
    expect(await rejection(provider.submit(job("[[up:submit_500]]")))).toMatchObject({ name: "ProviderUnavailableError", upstream: { status: 500 } });
    expect(seen).toHaveLength(1);
    const { upstreamId } = await provider.submit(job("[[up:poll_500]]"));
    seen = [];
    expect(await rejection(provider.poll(upstreamId))).toBeInstanceOf(ProviderUnavailableError);
    expect(seen).toHaveLength(1);
  });

  it("network errors: ProviderUnavailableError at submit and poll, cancel still resolves", async () => {
    const { server: probe, url } = await listen(() => {});
    await close(probe);
    const closed = createFalProvider({ baseUrl: url, apiKey: KEY, timeoutMs: 2000 });
    expect(await rejection(closed.submit(job("x")))).toMatchObject({ name: "ProviderUnavailableError", upstream: { code: "ECONNREFUSED" } });
    expect(await rejection(closed.poll(`${IMAGE_MODEL}/requests/r1`))).toBeInstanceOf(ProviderUnavailableError);
    await expect(closed.cancel(`${IMAGE_MODEL}/requests/r1`)).resolves.toBeUndefined();
  });

  it("a missing key: fal answers 401, the submission fails (80001) with the cause", async () => {
    const error = await rejection(falProvider({ apiKey: undefined }).submit(job("x")));
    expect(error).toMatchObject({ name: "UpstreamRejection", code: 80001, upstream: { status: 401 } });
    expect(seen[0]?.authorization).toBeUndefined();
  });

  it("a huge submit or status answer is capped: ProviderUnavailableError", async () => {
    const capped = falProvider({ maxResponseBytes: 1024 * 1024 });
    expect(await rejection(capped.submit(job("[[up:huge_submit]]")))).toMatchObject({
      name: "ProviderUnavailableError",
      message: expect.stringContaining("exceeds"),
    });
    const { upstreamId } = await capped.submit(job("[[up:huge_poll]]"));
    expect(await rejection(capped.poll(upstreamId))).toMatchObject({ name: "ProviderUnavailableError", message: expect.stringContaining("exceeds") });
  });

  it("an endless status answer is cut at the time limit: ProviderUnavailableError", async () => {
    const slow = falProvider({ maxResponseBytes: 512 * 1024 * 1024, timeoutMs: 300 });
    const { upstreamId } = await slow.submit(job("[[up:endless_poll]]"));
    expect(await rejection(slow.poll(upstreamId))).toBeInstanceOf(ProviderUnavailableError);
  });

  it("the caller's abort rejects with its reason, not as an upstream fault", async () => {
    const controller = new AbortController();
    controller.abort(new Error("worker shutting down"));
    await expect(provider.submit(job("x"), controller.signal)).rejects.toThrow("worker shutting down");
    const { upstreamId } = await provider.submit(job("x [[up:hang]]"));
    const pending = new AbortController();
    const poll = provider.poll(upstreamId, pending.signal);
    pending.abort(new Error("stop"));
    await expect(poll).rejects.toThrow();
  });

  it("cancel: PUT cancel stops a running request, which then fails 80003; cancel never rejects", async () => {
    const { upstreamId } = await provider.submit(job("slow [[up:delay_ms=60000]]"));
    await provider.cancel(upstreamId);
    expect(seen.at(-1)).toMatchObject({ method: "PUT", url: `/fal/fal-ai/flux/requests/${upstreamId.split("/").at(-1)}/cancel` });
    expect(await settle(upstreamId)).toMatchObject({ state: "failed", code: 80003 });
    await expect(provider.cancel(upstreamId)).resolves.toBeUndefined();
    await expect(provider.cancel(`${IMAGE_MODEL}/requests/unknown`)).resolves.toBeUndefined();
    await expect(provider.cancel("not an id")).resolves.toBeUndefined();
    expect(await provider.poll(`${IMAGE_MODEL}/requests/unknown`)).toMatchObject({ state: "failed", code: 80003, upstream: { status: 404 } });
  });
});

describe("fal webhooks", () => {
  let receiver: Server;
  let hookUrl: string;
  let hooks: { url: string; body: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    ({ server: receiver, url: hookUrl } = await listen((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        hooks.push({ url: req.url ?? "", body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown> });
        res.end();
      });
    }));
  });
  afterAll(() => close(receiver));
  beforeEach(() => {
    hooks = [];
  });

  async function hookFor(requestId: string, limitMs = 5000): Promise<{ url: string; body: Record<string, unknown> } | undefined> {
    const deadline = Date.now() + limitMs;
    while (Date.now() < deadline) {
      const hook = hooks.find((h) => h.body.request_id === requestId);
      if (hook) return hook;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return undefined;
  }

  it("the callback address goes as fal_webhook; fal POSTs {request_id, gateway_request_id, status: OK, payload} there", async () => {
    const callbackUrl = `${hookUrl}/upstream-callbacks/fal/tok_abc?x=1`;
    const submitted = await provider.submit(job("a lighthouse [[up:delay_ms=50]]", { callbackUrl }));
    expect(submitted.callback).toBe(true);
    expect(new URL(seen[0]!.url, base).searchParams.get("fal_webhook")).toBe(callbackUrl);
    const requestId = submitted.upstreamId.split("/").at(-1)!;
    const hook = await hookFor(requestId);
    expect(hook?.url).toBe("/upstream-callbacks/fal/tok_abc?x=1");
    expect(hook?.body).toMatchObject({
      request_id: requestId,
      gateway_request_id: requestId,
      status: FalWebhookStatus.Ok,
      payload: { images: [{ url: expect.any(String) }] },
    });
  });

  it("a failed request's webhook says ERROR with the error and its payload", async () => {
    const submitted = await provider.submit(job("[[up:fail]]", { callbackUrl: `${hookUrl}/cb` }));
    const hook = await hookFor(submitted.upstreamId.split("/").at(-1)!);
    expect(hook?.body).toMatchObject({
      status: FalWebhookStatus.Error,
      error: expect.stringContaining("500"),
      payload: { detail: "Simulated generation failure" },
    });
  });

  it("late and lost callbacks: the late one comes after the request completed, the lost one never", async () => {
    const late = await provider.submit(job("[[up:callback_delay_ms=300]]", { callbackUrl: `${hookUrl}/late` }));
    const lost = await provider.submit(job("[[up:callback_lost]]", { callbackUrl: `${hookUrl}/lost` }));
    expect(await settle(late.upstreamId)).toMatchObject({ state: "completed" });
    expect(hooks).toHaveLength(0);
    expect(await hookFor(late.upstreamId.split("/").at(-1)!)).toBeDefined();
    expect(await settle(lost.upstreamId)).toMatchObject({ state: "completed" });
    expect(hooks.find((h) => h.url === "/lost")).toBeUndefined();
  });
});
