import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import {
  PolicyViolation,
  ProviderUnavailableError,
  UpstreamRejection,
  createReplicateProvider,
  type Provider,
  type ProviderJob,
  type ProviderResult,
} from "@gen/providers";
import express from "express";
import { createUpstreamSim } from "../src/index.ts";
import { createReplicateSim } from "../src/replicate/replicate-sim.ts";
import { boundedAnswerTests, close, failure, listen, settleOn } from "./support/provider-test-kit.ts";

// The Replicate adapter through the replicate package against the simulator on loopback: every
// mapping of a prediction to our result, every failure to its code, and the completed webhook.
let server: Server;
let base: string;
let api: string;
let provider: Provider;

beforeAll(async () => {
  ({ server, url: base } = await listen(createUpstreamSim()));
  api = `${base}/replicate/v1`;
  provider = createReplicateProvider({ baseUrl: api, apiKey: "r8_test", timeoutMs: 10_000, maxResponseBytes: 256 * 1024 });
});

afterAll(() => close(server));

function job(prompt: string, extra: Partial<ProviderJob> = {}, params: Record<string, unknown> = {}): ProviderJob {
  return {
    taskId: "task_00000000000000000000000000000003",
    endpoint: "images",
    model: "replicate-image",
    upstreamModel: "black-forest-labs/flux-schnell",
    params: { prompt, ...params },
    ...extra,
  };
}

const settle = (upstreamId: string, on: Provider = provider, limitMs?: number): Promise<ProviderResult> => settleOn(on, upstreamId, limitMs);

async function prediction(id: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${api}/predictions/${id}`, { headers: { authorization: "Bearer r8_test" } });
  return (await response.json()) as Record<string, unknown>;
}

describe("Replicate provider ↔ Replicate simulator", () => {
  it("creates a prediction with the default mapping and completes with the URLs of real PNG files", async () => {
    const { upstreamId, callback } = await provider.submit(job("a harbour at night", {}, { n: 2, size: "512x512", model: "replicate-image" }));
    expect(callback).toBe(false);
    const created = await prediction(upstreamId);
    expect(created).toMatchObject({ model: "black-forest-labs/flux-schnell", input: { prompt: "a harbour at night", num_outputs: 2, aspect_ratio: "1:1" } });
    expect(created.input).not.toHaveProperty("model");
    expect(created.urls).toEqual({ get: `${api}/predictions/${upstreamId}`, cancel: `${api}/predictions/${upstreamId}/cancel`, web: expect.any(String) });
    const result = await settle(upstreamId);
    if (result.state !== "completed") throw new Error(JSON.stringify(result));
    expect(result.urls).toHaveLength(2);
    for (const url of result.urls ?? []) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("image/png");
      expect(
        Buffer.from(await response.arrayBuffer())
          .subarray(1, 4)
          .toString("latin1"),
      ).toBe("PNG");
    }
  });

  it("pins a version with owner/name:version, maps the video parameters, and takes a single output URL", async () => {
    const { upstreamId } = await provider.submit(
      job(
        "waves",
        { endpoint: "videos", upstreamModel: "acme/wan:video-5c7d5dc6" },
        { duration_seconds: 2, size: "1280x720", image_url: "https://example.com/a.png" },
      ),
    );
    expect(await prediction(upstreamId)).toMatchObject({
      version: "video-5c7d5dc6",
      input: { duration: 2, aspect_ratio: "16:9", image: "https://example.com/a.png" },
    });
    const result = await settle(upstreamId);
    expect(result).toMatchObject({ state: "completed", urls: [expect.stringMatching(/\.mp4$/)] });
  });

  it("sends an audio job's prompt as text, and takes the single audio file", async () => {
    const { upstreamId } = await provider.submit(
      job("hello there", { endpoint: "audio", upstreamModel: "jaaari/kokoro-speech" }, { voice: "af_bella", duration_seconds: 2 }),
    );
    expect((await prediction(upstreamId)).input).toEqual({ text: "hello there", voice: "af_bella", duration: 2 });
    expect(await settle(upstreamId)).toMatchObject({ state: "completed", urls: [expect.stringMatching(/\.wav$/)] });
  });

  it("sends a size near a common ratio as that ratio", async () => {
    const { upstreamId } = await provider.submit(job("p", {}, { size: "1344x768" }));
    expect((await prediction(upstreamId)).input).toMatchObject({ aspect_ratio: "16:9" });
  });

  it("applies the catalog's input map and constant input over the defaults", async () => {
    const { upstreamId } = await provider.submit(
      job("p", { inputMap: { size: null, n: "batch" }, constantInput: { go_fast: true } }, { n: 3, size: "512x512" }),
    );
    expect((await prediction(upstreamId)).input).toEqual({ prompt: "p", batch: 3, go_fast: true });
  });

  it("joins a language model's text pieces into an essay, with the token counts of its metrics", async () => {
    const { upstreamId } = await provider.submit(job("Why tides happen", { endpoint: "essay", upstreamModel: "meta/essay-llm" }, { max_words: 60 }));
    expect(upstreamId).toMatch(/:essay$/);
    const result = await settle(upstreamId);
    expect(result).toMatchObject({
      state: "completed",
      data: { text: expect.stringContaining("tides"), word_count: expect.any(Number) },
      tokens: { input: expect.any(Number), output: expect.any(Number) },
    });
  });

  it.each([
    ["[[up:policy_output]]", { code: 80006, stage: "output" }, /NSFW/],
    ["[[up:policy_input]]", { code: 80006, stage: "output" }, /flagged as sensitive/],
    ["[[up:fail_input]]", { code: 80007 }, /failed validation/],
    ["[[up:fail]]", { code: 80003 }, /simulated upstream failure/],
  ])("a prediction failed with %s maps to its code, keeping Replicate's text for the operator", async (prompt, expected, text) => {
    const { upstreamId } = await provider.submit(job(prompt));
    const result = await settle(upstreamId);
    expect(result).toMatchObject({ state: "failed", ...expected, upstream: { requestId: upstreamId, message: expect.stringMatching(text) } });
  });

  it("completed without outputs gives a completed result with no URLs (the worker's 80004)", async () => {
    const { upstreamId } = await provider.submit(job("[[up:no_urls]]"));
    expect(await settle(upstreamId)).toEqual({ state: "completed", urls: [] });
  });

  it("80007 with the problem's detail and status when the input is refused at create", async () => {
    const error = await failure(provider.submit(job("[[up:reject]]")));
    expect(error).toBeInstanceOf(UpstreamRejection);
    expect(error).toMatchObject({ code: 80007, upstream: { status: 422, message: expect.stringContaining("input.prompt") } });
  });

  it("429 at create is one exchange (the package's own repeats are not made) and carries Retry-After; the next submit succeeds", async () => {
    const throttled = job("[[up:submit_429=1]] [[up:retry_after=7]]");
    const error = await failure(provider.submit(throttled));
    expect(error).toBeInstanceOf(ProviderUnavailableError);
    expect(error).toMatchObject({ retryAfterMs: 7000, upstream: { status: 429, message: expect.stringContaining("throttled") } });
    const { upstreamId } = await provider.submit(throttled);
    expect(await settle(upstreamId)).toMatchObject({ state: "completed" });
  });

  it("429 and 500 at poll are transient; the prediction then completes", async () => {
    const { upstreamId } = await provider.submit(job("[[up:poll_429=1]] [[up:poll_500=2]]"));
    const throttled = await failure(provider.poll(upstreamId));
    expect(throttled).toBeInstanceOf(ProviderUnavailableError);
    expect(throttled).toMatchObject({ retryAfterMs: 1000 });
    expect(await failure(provider.poll(upstreamId))).toMatchObject({ name: "ProviderUnavailableError", upstream: { status: 500 } });
    expect(await settle(upstreamId)).toMatchObject({ state: "completed" });
  });

  it("5xx at create is transient", async () => {
    expect(await failure(provider.submit(job("[[up:submit_500]]")))).toMatchObject({ name: "ProviderUnavailableError", upstream: { status: 500 } });
  });

  it("nothing listening: transient", async () => {
    const probe = await listen(express());
    await close(probe.server);
    const closed = createReplicateProvider({ baseUrl: `${probe.url}/v1`, apiKey: "k", timeoutMs: 2000 });
    expect(await failure(closed.submit(job("x")))).toBeInstanceOf(ProviderUnavailableError);
    expect(await failure(closed.poll("abc"))).toBeInstanceOf(ProviderUnavailableError);
    await expect(closed.cancel("abc")).resolves.toBeUndefined();
  });

  it("a wrong token is 80001 at once with its cause (the operator's fault: no retry helps)", async () => {
    const app = express();
    app.use(express.json());
    app.use("/v1", createReplicateSim({ token: "r8_right" }));
    const guarded = await listen(app);
    try {
      const wrong = createReplicateProvider({ baseUrl: `${guarded.url}/v1`, apiKey: "r8_wrong", timeoutMs: 2000 });
      expect(await failure(wrong.submit(job("x")))).toMatchObject({
        name: "UpstreamRejection",
        code: 80001,
        upstream: { status: 401, message: expect.stringContaining("authentication") },
      });
      const right = createReplicateProvider({ baseUrl: `${guarded.url}/v1`, apiKey: "r8_right", timeoutMs: 2000 });
      const { upstreamId } = await right.submit(job("x"));
      expect(await settle(upstreamId, right)).toMatchObject({ state: "completed" });
    } finally {
      await close(guarded.server);
    }
  });

  it("a prediction it does not know is a terminal failure", async () => {
    expect(await provider.poll("nosuchprediction")).toMatchObject({ state: "failed", code: 80003, upstream: { status: 404 } });
  });

  boundedAnswerTests({
    provider: () => provider,
    quick: () => createReplicateProvider({ baseUrl: api, apiKey: "k", timeoutMs: 500, maxResponseBytes: 64 * 1024 * 1024 }),
    job: (prompt) => job(prompt),
  });

  it("cancel stops a running prediction (then 80003), is idempotent and never rejects", async () => {
    const { upstreamId } = await provider.submit(job("[[up:delay_ms=60000]]"));
    expect(await provider.poll(upstreamId)).toEqual({ state: "running" });
    await provider.cancel(upstreamId);
    await provider.cancel(upstreamId);
    expect(await provider.poll(upstreamId)).toMatchObject({ state: "failed", code: 80003, upstream: { requestId: upstreamId } });
    await expect(provider.cancel("nosuchprediction")).resolves.toBeUndefined();
  });

  describe("completed webhook", () => {
    let receiver: Server;
    let receiverUrl: string;
    const received: Array<{ path: string; headers: IncomingHttpHeaders; body: string }> = [];
    const waiters: Array<() => void> = [];

    beforeAll(async () => {
      const http = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
          received.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
          res.writeHead(204).end();
          waiters.splice(0).forEach((wake) => wake());
        });
      });
      ({ server: receiver, url: receiverUrl } = await listen(http));
    });

    afterAll(() => close(receiver));

    async function delivery(path: string, limitMs = 3000) {
      const deadline = Date.now() + limitMs;
      for (;;) {
        const found = received.find((entry) => entry.path === path);
        if (found || Date.now() > deadline) return found;
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    }

    it("is requested with the callback URL and filter, and POSTed signed when the prediction completes", async () => {
      const { upstreamId, callback } = await provider.submit(job("[[up:delay_ms=100]]", { callbackUrl: `${receiverUrl}/cb/one?token=t1` }));
      expect(callback).toBe(true);
      expect(await prediction(upstreamId)).toMatchObject({ webhook: `${receiverUrl}/cb/one?token=t1`, webhook_events_filter: ["completed"] });
      const sent = await delivery("/cb/one?token=t1");
      if (!sent) throw new Error("no webhook");
      expect(JSON.parse(sent.body)).toMatchObject({ id: upstreamId, status: "succeeded", output: [expect.stringMatching(/\.png$/)], error: null });
      const secret = (await (await fetch(`${api}/webhooks/default/secret`, { headers: { authorization: "Bearer r8_test" } })).json()) as { key: string };
      const signed = `${String(sent.headers["webhook-id"])}.${String(sent.headers["webhook-timestamp"])}.${sent.body}`;
      const expected = createHmac("sha256", Buffer.from(secret.key.replace(/^whsec_/, ""), "base64"))
        .update(signed)
        .digest("base64");
      expect(sent.headers["webhook-signature"]).toBe(`v1,${expected}`);
    });

    it("is sent for a failed prediction too, late when told, and never when lost", async () => {
      await provider.submit(job("[[up:fail]]", { callbackUrl: `${receiverUrl}/cb/failed` }));
      expect(JSON.parse((await delivery("/cb/failed"))?.body ?? "{}")).toMatchObject({ status: "failed", error: expect.any(String) });

      const late = await provider.submit(job("[[up:callback_delay_ms=1500]]", { callbackUrl: `${receiverUrl}/cb/late` }));
      expect(await settle(late.upstreamId)).toMatchObject({ state: "completed" });
      expect(received.some((entry) => entry.path === "/cb/late")).toBe(false);
      expect(await delivery("/cb/late")).toBeDefined();

      const lost = await provider.submit(job("[[up:callback_lost]]", { callbackUrl: `${receiverUrl}/cb/lost` }));
      expect(await settle(lost.upstreamId)).toMatchObject({ state: "completed" });
      expect(await delivery("/cb/lost", 300)).toBeUndefined();
    });

    it("is sent when a prediction is canceled", async () => {
      const { upstreamId } = await provider.submit(job("[[up:delay_ms=60000]]", { callbackUrl: `${receiverUrl}/cb/canceled` }));
      await provider.cancel(upstreamId);
      expect(JSON.parse((await delivery("/cb/canceled"))?.body ?? "{}")).toMatchObject({ id: upstreamId, status: "canceled" });
    });
  });

  it("PolicyViolation is what a policy refusal at create becomes", () => {
    expect(new PolicyViolation("input").code).toBe(80006);
  });
});
