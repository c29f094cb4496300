import type { Server } from "node:http";
import { ProviderUnavailableError, UpstreamRejection, createRunwayProvider, type Provider, type ProviderJob, type ProviderResult } from "@gen/providers";
import express from "express";
import { createUpstreamSim } from "../src/index.ts";
import { createRunwaySim } from "../src/runway/runway-sim.ts";
import { boundedAnswerTests, close, failure, listen, settleOn } from "./support/provider-test-kit.ts";

// The Runway adapter through @runwayml/sdk against the simulator on loopback: the routes it picks,
// every task status and failure code, and the faults (no webhooks: Runway's API has none).
let server: Server;
let api: string;
let provider: Provider;
const seen: Array<{ method: string; path: string; body: Record<string, unknown>; version?: string; authorization?: string }> = [];

beforeAll(async () => {
  // Records what reaches the simulator, to check the wire format the SDK sends.
  const app = express();
  app.use(express.json(), (req, _res, next) => {
    seen.push({
      method: req.method,
      path: req.path,
      body: req.body as Record<string, unknown>,
      version: req.get("x-runway-version"),
      authorization: req.get("authorization"),
    });
    next();
  });
  app.use(createUpstreamSim());
  let url: string;
  ({ server, url } = await listen(app));
  api = `${url}/runway`;
  provider = createRunwayProvider({ baseUrl: api, apiKey: "key_test", timeoutMs: 10_000, maxResponseBytes: 256 * 1024 });
});

afterAll(() => close(server));

function job(
  prompt: string,
  params: Record<string, unknown> = { image_url: "https://example.com/first-frame.png", size: "1280x720" },
  extra: Partial<ProviderJob> = {},
): ProviderJob {
  return {
    taskId: "task_00000000000000000000000000000004",
    endpoint: "videos",
    model: "runway-video",
    upstreamModel: "gen4_turbo",
    params: { prompt, ...params },
    ...extra,
  };
}

const settle = (upstreamId: string, on: Provider = provider, limitMs?: number): Promise<ProviderResult> => settleOn(on, upstreamId, limitMs);

describe("Runway provider ↔ Runway simulator", () => {
  it("animates the reference image by image_to_video, with the default mapping, and completes with an MP4 URL", async () => {
    const { upstreamId, callback } = await provider.submit(
      job("waves at dusk", { image_url: "https://example.com/first-frame.png", duration_seconds: 5, size: "1280x720", n: 1 }),
    );
    expect(callback).toBe(false);
    expect(seen.at(-1)).toEqual({
      method: "POST",
      path: "/runway/v1/image_to_video",
      body: { model: "gen4_turbo", promptText: "waves at dusk", promptImage: "https://example.com/first-frame.png", duration: 5, ratio: "1280:720" },
      version: "2024-11-06",
      authorization: "Bearer key_test",
    });
    const result = await settle(upstreamId);
    if (result.state !== "completed") throw new Error(JSON.stringify(result));
    expect(result.urls).toHaveLength(1);
    const response = await fetch(result.urls?.[0] ?? "");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("video/mp4");
  });

  it("gen4_turbo without a reference image: 80007 before any request", async () => {
    const before = seen.length;
    const error = await failure(provider.submit(job("no image", {})));
    expect(error).toBeInstanceOf(UpstreamRejection);
    expect(error).toMatchObject({ code: 80007, upstream: { message: expect.stringContaining("image_url") } });
    expect(seen.length).toBe(before);
  });

  it("a text-to-video model without a reference image goes to text_to_video", async () => {
    const { upstreamId } = await provider.submit(job("a fox", { duration_seconds: 4, size: "720x1280" }, { upstreamModel: "veo3.1_fast" }));
    expect(seen.at(-1)).toMatchObject({
      path: "/runway/v1/text_to_video",
      body: { model: "veo3.1_fast", promptText: "a fox", duration: 4, ratio: "720:1280" },
    });
    expect(await settle(upstreamId)).toMatchObject({ state: "completed", urls: [expect.stringMatching(/\.mp4$/)] });
  });

  it("an image by text_to_image, the reference image as referenceImages", async () => {
    const { upstreamId } = await provider.submit(
      job("a lighthouse", { size: "512x512", image_url: "https://example.com/ref.png", n: 1 }, { endpoint: "images", upstreamModel: "gen4_image" }),
    );
    expect(seen.at(-1)).toMatchObject({
      path: "/runway/v1/text_to_image",
      body: { model: "gen4_image", promptText: "a lighthouse", ratio: "512:512", referenceImages: [{ uri: "https://example.com/ref.png" }] },
    });
    expect(await settle(upstreamId)).toMatchObject({ state: "completed", urls: [expect.stringMatching(/\.png$/)] });
  });

  it.each([
    ["[[up:policy_input]]", { code: 80006, stage: "input" }, "SAFETY.INPUT.TEXT"],
    ["[[up:policy_output]]", { code: 80006, stage: "output" }, "SAFETY.OUTPUT.VIDEO"],
    ["[[up:fail_input]]", { code: 80007 }, "ASSET.INVALID"],
    ["[[up:fail]]", { code: 80003 }, "INTERNAL.BAD_OUTPUT.CODE01"],
  ])("a task FAILED with %s maps by its failureCode, kept for the operator", async (prompt, expected, failureCode) => {
    const { upstreamId } = await provider.submit(job(prompt));
    expect(await settle(upstreamId)).toMatchObject({
      state: "failed",
      ...expected,
      upstream: { requestId: upstreamId, message: expect.stringContaining(failureCode) },
    });
  });

  it("80007 with Runway's error when the body is refused", async () => {
    expect(await failure(provider.submit(job("[[up:reject]]")))).toMatchObject({
      name: "UpstreamRejection",
      code: 80007,
      upstream: { status: 400, message: "Validation of body failed" },
    });
  });

  it("429 at submit is one request (SDK retries off) with Retry-After; the next submit succeeds", async () => {
    const before = seen.length;
    const throttled = job("[[up:submit_429=1]] [[up:retry_after=4]]");
    const error = await failure(provider.submit(throttled));
    expect(error).toBeInstanceOf(ProviderUnavailableError);
    expect(error).toMatchObject({ retryAfterMs: 4000, upstream: { status: 429 } });
    expect(seen.length).toBe(before + 1);
    const { upstreamId } = await provider.submit(throttled);
    expect(await settle(upstreamId)).toMatchObject({ state: "completed" });
  });

  it("429 and 500 at poll are transient; the task then completes", async () => {
    const { upstreamId } = await provider.submit(job("[[up:poll_429=1]] [[up:poll_500=2]]"));
    expect(await failure(provider.poll(upstreamId))).toMatchObject({ name: "ProviderUnavailableError", retryAfterMs: 1000 });
    expect(await failure(provider.poll(upstreamId))).toMatchObject({ name: "ProviderUnavailableError", upstream: { status: 500 } });
    expect(await settle(upstreamId)).toMatchObject({ state: "completed" });
  });

  it("5xx at submit and nothing listening are transient", async () => {
    expect(await failure(provider.submit(job("[[up:submit_500]]")))).toMatchObject({ name: "ProviderUnavailableError", upstream: { status: 500 } });
    const probe = await listen(express());
    await close(probe.server);
    const closed = createRunwayProvider({ baseUrl: probe.url, apiKey: "k", timeoutMs: 2000 });
    expect(await failure(closed.submit(job("x")))).toBeInstanceOf(ProviderUnavailableError);
    expect(await failure(closed.poll("abc"))).toBeInstanceOf(ProviderUnavailableError);
    await expect(closed.cancel("abc")).resolves.toBeUndefined();
  });

  it("a wrong secret is 80001 at once with its cause (the operator's fault)", async () => {
    const app = express();
    app.use(express.json());
    app.use(createRunwaySim({ apiSecret: "key_right" }));
    const guarded = await listen(app);
    try {
      const wrong = createRunwayProvider({ baseUrl: guarded.url, apiKey: "key_wrong", timeoutMs: 2000 });
      expect(await failure(wrong.submit(job("x")))).toMatchObject({ name: "UpstreamRejection", code: 80001, upstream: { status: 401 } });
    } finally {
      await close(guarded.server);
    }
  });

  it("a task it does not know is a terminal failure", async () => {
    expect(await provider.poll("00000000-0000-0000-0000-000000000000")).toMatchObject({ state: "failed", code: 80003, upstream: { status: 404 } });
  });

  boundedAnswerTests({
    provider: () => provider,
    quick: () => createRunwayProvider({ baseUrl: api, apiKey: "k", timeoutMs: 500, maxResponseBytes: 64 * 1024 * 1024 }),
    job: (prompt) => job(prompt),
  });

  it("cancel (DELETE) stops a running task, then CANCELLED is 80003; never rejects", async () => {
    const { upstreamId } = await provider.submit(job("[[up:delay_ms=60000]]"));
    expect(await provider.poll(upstreamId)).toEqual({ state: "running" });
    await provider.cancel(upstreamId);
    expect(seen.at(-1)).toMatchObject({ method: "DELETE", path: `/runway/v1/tasks/${upstreamId}` });
    expect(await provider.poll(upstreamId)).toMatchObject({ state: "failed", code: 80003 });
    await expect(provider.cancel("nosuchtask")).resolves.toBeUndefined();
  });
});
