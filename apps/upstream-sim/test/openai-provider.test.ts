import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  PolicyViolation,
  ProviderUnavailableError,
  UpstreamRejection,
  createOpenAIProvider,
  hasOutput,
  type OpenAIProviderOptions,
  type Provider,
  type ProviderJob,
  type ProviderResult,
} from "@gen/providers";
import { OPENAI_SIM_API_KEY, createUpstreamSim } from "../src/index.ts";

// The OpenAI adapter through the official SDK against the OpenAI simulator on loopback: every
// mapping of the Images, Moderations, Responses and Videos APIs to our results and codes.
let server: Server;
let baseUrl: string;
let provider: Provider;

const openai = (options: Partial<OpenAIProviderOptions> = {}) => createOpenAIProvider({ baseUrl, apiKey: OPENAI_SIM_API_KEY, timeoutMs: 5000, ...options });

beforeAll(async () => {
  server = createUpstreamSim().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/openai/v1`;
  provider = openai();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function job(endpoint: ProviderJob["endpoint"], upstreamModel: string, params: Record<string, unknown>, extra: Partial<ProviderJob> = {}): ProviderJob {
  return { taskId: "task_00000000000000000000000000000003", endpoint, model: `openai-${endpoint}`, upstreamModel, params, ...extra };
}

async function settle(upstreamId: string, limitMs = 5000): Promise<ProviderResult> {
  const started = Date.now();
  for (;;) {
    const result = await provider.poll(upstreamId);
    if (result.state !== "running" || Date.now() - started > limitMs) return result;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error("resolved"),
    (error: unknown) => error,
  );
}

describe("OpenAI provider ↔ OpenAI simulator", () => {
  it("images, base64: PNG files typed by their bytes, token usage, synchronous with the request id", async () => {
    const submitted = await provider.submit(job("images", "gpt-image-1", { prompt: "a lighthouse", n: 2, size: "1024x1024", quality: "hd" }));
    expect(submitted.upstreamId).toMatch(/^req_/);
    expect(submitted.callback).toBeUndefined();
    const result = submitted.result;
    if (result?.state !== "completed") throw new Error(JSON.stringify(result));
    expect(result.files).toHaveLength(2);
    expect(result.files?.[0]).toMatchObject({ contentType: "image/png", extension: "png" });
    expect(result.files?.[0]?.data.subarray(1, 4).toString("latin1")).toBe("PNG");
    expect(result.tokens).toEqual({ input: expect.any(Number), output: expect.any(Number) });
    expect(hasOutput("images", result)).toBe(true);
  });

  it("images, URLs (DALL·E response_format url): URLs for the worker to download", async () => {
    const { result } = await provider.submit(
      job("images", "dall-e-3", { prompt: "a lighthouse", size: "1024x1024" }, { constantInput: { response_format: "url" } }),
    );
    if (result?.state !== "completed") throw new Error(JSON.stringify(result));
    expect(result.files).toBeUndefined();
    expect(result.urls).toHaveLength(1);
    const response = await fetch(result.urls?.[0] ?? "");
    expect(response.headers.get("content-type")).toBe("image/png");
  });

  it("images whose bytes are no image are not stored: completed without output (the worker's 80004)", async () => {
    const { result } = await provider.submit(job("images", "gpt-image-1", { prompt: "[[up:mislabel]]" }));
    if (result?.state !== "completed") throw new Error(JSON.stringify(result));
    expect(result.files).toBeUndefined();
    expect(hasOutput("images", result)).toBe(false);
  });

  it("a resumed poll of a synchronous answer fails 80003, saying the answer was lost", async () => {
    const { upstreamId } = await provider.submit(job("moderations", "omni-moderation-latest", { input: "hello" }));
    expect(await provider.poll(upstreamId)).toMatchObject({ state: "failed", code: 80003, upstream: { requestId: upstreamId } });
  });

  it("moderations: {flagged, categories, category_scores} as returned; several inputs merged", async () => {
    const single = await provider.submit(job("moderations", "omni-moderation-latest", { input: "I will kill you" }));
    if (single.result?.state !== "completed") throw new Error(JSON.stringify(single.result));
    expect(Object.keys(single.result.data ?? {})).toEqual(["flagged", "categories", "category_scores"]);
    expect(single.result.data).toMatchObject({ flagged: true, categories: { violence: true } });
    const many = await provider.submit(job("moderations", "omni-moderation-latest", { input: ["a nice day", "you idiot"] }));
    if (many.result?.state !== "completed") throw new Error(JSON.stringify(many.result));
    expect(many.result.data).toMatchObject({ flagged: true, categories: { harassment: true, violence: false } });
  });

  it("essay: background response polled to {text, word_count} with token usage", async () => {
    const submitted = await provider.submit(job("essay", "gpt-4.1-mini", { prompt: "Why tides happen", max_words: 120, content_filter: true }));
    expect(submitted.upstreamId).toMatch(/^resp_/);
    const result = await settle(submitted.upstreamId);
    if (result.state !== "completed") throw new Error(JSON.stringify(result));
    const data = result.data as { text: string; word_count: number };
    expect(data.text).toContain("tides");
    expect(data.word_count).toBeGreaterThan(0);
    expect(data.word_count).toBeLessThanOrEqual(120);
    expect(result.tokens).toEqual({ input: expect.any(Number), output: expect.any(Number) });
    expect(result.tokens?.output).toBeGreaterThan(10);
  });

  it("humanize: {text} with token usage", async () => {
    const { upstreamId } = await provider.submit(job("humanize", "gpt-4.1-mini", { text: "We do not utilize numerous tools." }));
    const result = await settle(upstreamId);
    expect(result).toMatchObject({ state: "completed", data: { text: "We don't use many tools." }, tokens: { input: expect.any(Number) } });
  });

  it("detect: the JSON-schema answer as {ai_probability, label}", async () => {
    const { upstreamId } = await provider.submit(job("detect", "gpt-4.1-mini", { text: "Furthermore, we must delve into this tapestry." }));
    const result = await settle(upstreamId);
    if (result.state !== "completed") throw new Error(JSON.stringify(result));
    expect(Object.keys(result.data ?? {})).toEqual(["ai_probability", "label"]);
    expect(["ai", "human", "mixed"]).toContain(result.data?.label);
  });

  it("videos: queued, then the MP4 content as a file; image_url is the reference image", async () => {
    const { upstreamId } = await provider.submit(
      job(
        "videos",
        "sora-2",
        { prompt: "waves", duration_seconds: 4, size: "1280x720", image_url: "https://example.com/a.png", delay: "[[up:delay_ms=100]]" },
        {
          inputMap: { delay: null },
        },
      ),
    );
    expect(upstreamId).toMatch(/^video_/);
    const delayed = await provider.submit(job("videos", "sora-2", { prompt: "waves [[up:delay_ms=300]]", duration_seconds: 4, size: "1280x720" }));
    expect(await provider.poll(delayed.upstreamId)).toEqual({ state: "running" });
    const result = await settle(upstreamId);
    if (result.state !== "completed") throw new Error(JSON.stringify(result));
    expect(result.files?.[0]).toMatchObject({ contentType: "video/mp4", extension: "mp4" });
    expect(result.files?.[0]?.data.subarray(4, 8).toString("latin1")).toBe("ftyp");
  });

  it("videos: a video over the media cap is a terminal failure, not a poll failed forever", async () => {
    const small = openai({ maxMediaBytes: 1000 });
    const { upstreamId } = await small.submit(job("videos", "sora-2", { prompt: "waves", duration_seconds: 4, size: "1280x720" }));
    expect(await small.poll(upstreamId)).toMatchObject({ state: "failed", code: 80003, upstream: { message: expect.stringContaining("1000 bytes") } });
  });

  it("80007 with the cause: a 400 invalid request (status, message, request id)", async () => {
    const error = await failure(provider.submit(job("videos", "sora-2", { prompt: "waves", duration_seconds: 5 })));
    expect(error).toBeInstanceOf(UpstreamRejection);
    expect(error).toMatchObject({
      code: 80007,
      upstream: { status: 400, message: expect.stringContaining("Supported values"), requestId: expect.stringMatching(/^req_/) },
    });
    expect(await failure(provider.submit(job("essay", "gpt-4.1-mini", { prompt: "[[up:reject]]" })))).toMatchObject({ code: 80007 });
  });

  it("80006 at the input stage: content_policy_violation / moderation_blocked at submit", async () => {
    for (const rejected of [
      job("images", "gpt-image-1", { prompt: "[[up:policy_input]]" }),
      job("videos", "sora-2", { prompt: "[[up:policy_input]]" }),
      job("essay", "gpt-4.1-mini", { prompt: "[[up:policy_input]]" }),
    ]) {
      const error = await failure(provider.submit(rejected));
      expect(error).toBeInstanceOf(PolicyViolation);
      expect(error).toMatchObject({ code: 80006, stage: "input", upstream: { status: 400, requestId: expect.stringMatching(/^req_/) } });
    }
  });

  it("80006 at the output stage: a refusal, a video blocked by moderation", async () => {
    const text = await provider.submit(job("essay", "gpt-4.1-mini", { prompt: "[[up:policy_output]]" }));
    expect(await settle(text.upstreamId)).toMatchObject({
      state: "failed",
      code: 80006,
      stage: "output",
      upstream: { message: expect.stringContaining("refusal") },
    });
    const video = await provider.submit(job("videos", "sora-2", { prompt: "[[up:policy_output]]" }));
    expect(await settle(video.upstreamId)).toMatchObject({ state: "failed", code: 80006, stage: "output" });
  });

  it("80003: a failed response or video, and a job OpenAI does not know", async () => {
    const text = await provider.submit(job("humanize", "gpt-4.1-mini", { text: "[[up:fail]]" }));
    expect(await settle(text.upstreamId)).toMatchObject({ state: "failed", code: 80003, upstream: { message: expect.stringContaining("server_error") } });
    const video = await provider.submit(job("videos", "sora-2", { prompt: "[[up:fail]]" }));
    expect(await settle(video.upstreamId)).toMatchObject({ state: "failed", code: 80003 });
    expect(await provider.poll("resp_unknown")).toMatchObject({ state: "failed", code: 80003, upstream: { status: 404 } });
  });

  it("429 with Retry-After is transient with retryAfterMs; the same submit then succeeds", async () => {
    const limited = job("images", "gpt-image-1", { prompt: "a lighthouse [[up:submit_429=1]]" });
    const error = await failure(provider.submit(limited));
    expect(error).toBeInstanceOf(ProviderUnavailableError);
    expect(error).toMatchObject({ retryAfterMs: 1000, upstream: { status: 429 } });
    expect((await provider.submit(limited)).result?.state).toBe("completed");
  });

  it("5xx, nothing listening and a wrong key are transient", async () => {
    expect(await failure(provider.submit(job("essay", "gpt-4.1-mini", { prompt: "[[up:submit_500]]" })))).toMatchObject({
      name: "ProviderUnavailableError",
      upstream: { status: 500 },
    });
    const probe = createUpstreamSim().listen(0, "127.0.0.1");
    await new Promise((resolve) => probe.once("listening", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const closed = createOpenAIProvider({ baseUrl: `http://127.0.0.1:${port}/openai/v1`, apiKey: "k", timeoutMs: 2000 });
    expect(await failure(closed.submit(job("images", "gpt-image-1", { prompt: "x" })))).toBeInstanceOf(ProviderUnavailableError);
    expect(await failure(closed.poll("resp_1"))).toBeInstanceOf(ProviderUnavailableError);
    expect(await failure(openai({ apiKey: "wrong" }).submit(job("images", "gpt-image-1", { prompt: "x" })))).toMatchObject({
      name: "ProviderUnavailableError",
      upstream: { status: 401 },
    });
  });

  it("a huge answer stops at the cap; an endless one at the time limit", async () => {
    const capped = openai({ maxResponseBytes: 64 * 1024, maxMediaBytes: 64 * 1024 });
    const huge = await failure(capped.submit(job("images", "gpt-image-1", { prompt: "[[up:huge_submit]]" })));
    expect(huge).toBeInstanceOf(ProviderUnavailableError);
    expect((huge as Error).message).toContain("65536 bytes");
    const polled = await capped.submit(job("essay", "gpt-4.1-mini", { prompt: "[[up:huge_poll]]" }));
    expect(await failure(capped.poll(polled.upstreamId))).toBeInstanceOf(ProviderUnavailableError);

    const hurried = openai({ timeoutMs: 300, mediaTimeoutMs: 300 });
    const started = Date.now();
    expect(await failure(hurried.submit(job("images", "gpt-image-1", { prompt: "[[up:endless_submit]]" })))).toBeInstanceOf(ProviderUnavailableError);
    const endless = await hurried.submit(job("essay", "gpt-4.1-mini", { prompt: "[[up:endless_poll]]" }));
    expect(await failure(hurried.poll(endless.upstreamId))).toBeInstanceOf(ProviderUnavailableError);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it("cancel: a background response becomes cancelled (80003 at the next poll), a video is deleted; both never reject", async () => {
    const text = await provider.submit(job("essay", "gpt-4.1-mini", { prompt: "[[up:hang]]" }));
    await provider.cancel(text.upstreamId);
    await provider.cancel(text.upstreamId);
    expect(await provider.poll(text.upstreamId)).toMatchObject({ state: "failed", code: 80003, upstream: { message: expect.stringContaining("cancelled") } });
    const video = await provider.submit(job("videos", "sora-2", { prompt: "[[up:hang]]" }));
    await provider.cancel(video.upstreamId);
    expect(await provider.poll(video.upstreamId)).toMatchObject({ state: "failed", code: 80003, upstream: { status: 404 } });
    await expect(provider.cancel("req_synchronous")).resolves.toBeUndefined();
    await expect(createOpenAIProvider({ baseUrl: "http://127.0.0.1:1/v1", apiKey: "k" }).cancel("resp_1")).resolves.toBeUndefined();
  });

  it("an abort is the caller's, never an upstream fault", async () => {
    const controller = new AbortController();
    const pending = provider.submit(job("images", "gpt-image-1", { prompt: "[[up:hang]]" }), controller.signal);
    setTimeout(() => controller.abort(new Error("shutting down")), 50);
    await expect(pending).rejects.toThrow("shutting down");
  });
});
