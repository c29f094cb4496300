import { mkdtempSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { createWebhookSender } from "@gen/webhook-sender";
import { resolverFor } from "../../packages/webhook-sender/test/helpers/fake-resolver.ts";
import { startReceiver, type Receiver } from "../../packages/webhook-sender/test/helpers/receiver.ts";
import { createTestCa, issueServerCert } from "../../packages/webhook-sender/test/helpers/test-pki.ts";
import { OPENAI_SIM_API_KEY, createUpstreamSim } from "../../apps/upstream-sim/src/index.ts";
import { ledgerHolds, startStack, type Stack } from "./stack.ts";
import { findTask } from "@gen/db";

// The chain for OpenAI models: submission through the gateway -> the worker's OpenAI adapter ->
// the OpenAI simulator speaking the real wire protocol -> stored output -> settlement -> webhook.
// A submitted webhook_url may not name a port, so the receiver listens on 443 (root only), on a
// loopback address of its own so that it never meets another suite's receiver.
const HOST = "openai-hooks.test.example";
const HOOK_ADDRESS = `127.0.${10 + Math.floor(Math.random() * 200)}.${10 + Math.floor(Math.random() * 200)}`;
const canBind443 = process.getuid?.() === 0;

let simServer: Server;
let stack: Stack;
let receiver: Receiver | undefined;
let user: { userId: string; auth: string };

const ESSAY_PRICING = { method: "tokens", credits: 10, units: [{ param: "max_words", per: 100 }], inputPer1k: 10, outputPer1k: 100 };

function catalogFor(upstreamUrl: string) {
  const common = { provider: "openai", upstreamUrl, contentFilter: false, maxPromptLength: 2000, moderationRefund: { output: 1 } };
  return {
    models: [
      {
        ...common,
        id: "openai-image",
        endpoint: "images",
        upstreamModel: "gpt-image-1",
        sizes: ["256x256"],
        defaultSize: "256x256",
        parameters: { type: "object", properties: { n: { type: "integer", minimum: 1, maximum: 4, default: 1 } } },
        pricing: { method: "flat", credits: 2, units: ["n"] },
      },
      {
        ...common,
        id: "openai-essay",
        endpoint: "essay",
        upstreamModel: "gpt-4.1-mini",
        parameters: { type: "object", properties: { max_words: { type: "integer", minimum: 50, maximum: 2000, default: 200 } } },
        pricing: ESSAY_PRICING,
      },
      {
        ...common,
        id: "openai-moderation",
        endpoint: "moderations",
        upstreamModel: "omni-moderation-latest",
        pricing: { method: "flat", credits: 1, units: [] },
      },
      { ...common, id: "openai-detect", endpoint: "detect", upstreamModel: "gpt-4.1-mini", pricing: { method: "flat", credits: 1, units: [] } },
      {
        ...common,
        id: "openai-video",
        endpoint: "videos",
        upstreamModel: "sora-2",
        sizes: ["1280x720"],
        defaultSize: "1280x720",
        parameters: { type: "object", properties: { duration_seconds: { type: "integer", enum: [4, 8, 12], default: 4 } } },
        pricing: { method: "flat", credits: 1, units: ["duration_seconds"] },
      },
    ],
  };
}

beforeAll(async () => {
  simServer = createUpstreamSim().listen(0, "127.0.0.1");
  await new Promise((resolve) => simServer.once("listening", resolve));
  const upstreamUrl = `http://127.0.0.1:${(simServer.address() as AddressInfo).port}/openai/v1`;
  const catalogPath = path.join(mkdtempSync(path.join(os.tmpdir(), "gen-openai-catalog-")), "models.json");
  writeFileSync(catalogPath, JSON.stringify(catalogFor(upstreamUrl)));
  stack = await startStack({ MODEL_CATALOG: catalogPath, OPENAI_API_KEY: OPENAI_SIM_API_KEY, WEBHOOK_ALLOWED_CIDRS: `${HOOK_ADDRESS}/32` });
  stack.startWorker();
  if (canBind443) {
    const ca = await createTestCa("e2e openai CA");
    receiver = await startReceiver({ tls: await issueServerCert([HOST], { ca }), host: HOOK_ADDRESS, port: 443 });
    stack.startDeliveryWorker(
      createWebhookSender({ timeoutMs: 2000, allowedCidrs: [`${HOOK_ADDRESS}/32`], lookup: resolverFor(HOST, [HOOK_ADDRESS]), ca: ca.cert }),
    );
  }
  user = await stack.user();
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.close();
  simServer?.closeAllConnections();
  await new Promise((resolve) => simServer?.close(resolve));
});

afterEach(() => ledgerHolds(stack, user.userId));

async function complete(path: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const submitted = await stack.submit(user.auth, path, body);
  expect(submitted.status).toBe(202);
  return stack.waitTerminal(user.auth, submitted.body.id);
}

describe("OpenAI models end to end", () => {
  test("an image (base64 from the Images API) is stored under CDN_URL and the webhook carries the task", async () => {
    const hook = `https://${HOST}/hooks/openai`;
    const task = await complete("/api/v1/images/generations", { model: "openai-image", prompt: "a red fox", n: 2, ...(receiver ? { webhook_url: hook } : {}) });
    expect(task).toMatchObject({ status: "completed", error: null, usage: { credits: 4 }, billing: { method: "flat", refunded_credits: 0 } });
    const urls: string[] = task.output.image_urls;
    expect(urls).toHaveLength(2);
    for (const url of urls) {
      expect(url.startsWith(`${stack.config.cdnUrl}/`)).toBe(true);
      const res = await fetch(url);
      expect(res.headers.get("content-type")).toContain("image/png");
      expect(
        Buffer.from(await res.arrayBuffer())
          .subarray(1, 4)
          .toString("latin1"),
      ).toBe("PNG");
    }
    const row = (await findTask(stack.gateway.db, task.id))!;
    expect(row).toMatchObject({ upstreamProvider: "openai", upstreamModel: "gpt-image-1", upstreamId: expect.stringMatching(/^req_/) });
    if (!receiver) return console.warn("openai e2e: webhook delivery not checked, binding port 443 needs root");
    const deadline = Date.now() + 15_000;
    while (receiver.requests.length < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const polled = await fetch(`${stack.baseUrl}/api/v1/tasks/${task.id}`, { headers: { Authorization: user.auth } });
    expect(receiver.requests.map((request) => request.body.toString("utf8"))).toEqual([await polled.text()]);
  }, 30_000);

  test("an essay from a background response is charged by its tokens", async () => {
    const task = await complete("/api/v1/essay", { model: "openai-essay", prompt: "Why tides happen", max_words: 200 });
    expect(task.status).toBe("completed");
    expect(task.output.text).toContain("tides");
    expect(task.output.word_count).toBeLessThanOrEqual(200);
    const { tokens, reserved_credits: reserved } = task.billing;
    expect(task.billing.method).toBe("tokens");
    expect(tokens).toEqual({ input: expect.any(Number), output: expect.any(Number) });
    expect(reserved).toBe(20);
    const expected = Math.min(reserved, Math.ceil((tokens.input * ESSAY_PRICING.inputPer1k + tokens.output * ESSAY_PRICING.outputPer1k) / 1000));
    expect(task.usage.credits).toBe(expected);
    expect(task.billing.refunded_credits).toBe(reserved - expected);
  });

  test("moderation and detection outputs have the endpoints' shapes", async () => {
    const moderation = await complete("/api/v1/moderations", { model: "openai-moderation", input: ["a nice day", "I will kill you"] });
    expect(Object.keys(moderation.output).sort()).toEqual(["categories", "category_scores", "flagged"]);
    expect(moderation.output).toMatchObject({ flagged: true, categories: { violence: true } });
    const detect = await complete("/api/v1/detect", { model: "openai-detect", text: "Furthermore, we must delve into this." });
    expect(Object.keys(detect.output).sort()).toEqual(["ai_probability", "label"]);
  });

  test("a video is polled to completion and its MP4 stored", async () => {
    const task = await complete("/api/v1/videos/generations", { model: "openai-video", prompt: "waves" });
    expect(task.status).toBe("completed");
    const res = await fetch(task.output.video_urls[0]);
    expect(res.headers.get("content-type")).toContain("video/mp4");
  });

  test("a 429 is waited out; a policy verdict on the prompt is 80006 and refunded", async () => {
    const limited = await complete("/api/v1/images/generations", { model: "openai-image", prompt: "a heron [[up:submit_429=1]]" });
    expect(limited.status).toBe("completed");
    const refused = await complete("/api/v1/essay", { model: "openai-essay", prompt: "[[up:policy_input]]" });
    expect(refused).toMatchObject({ status: "failed", error: { code: 80006 }, usage: { credits: 0 } });
    expect(JSON.stringify(refused.error)).not.toContain("safety system");
    const row = (await findTask(stack.gateway.db, refused.id))!;
    expect(row.failureCause).toMatchObject({
      provider: "openai",
      status: 400,
      message: expect.stringContaining("safety system"),
      requestId: expect.stringMatching(/^req_/),
    });
  });
});
