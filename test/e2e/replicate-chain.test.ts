import { CALLBACK_SAFETY_POLL_MS } from "../../apps/worker/src/generation/poll-schedule.ts";
import { ledgerHolds } from "./stack.ts";
import { HOOK_HOST, startProviderChain, webhookFor, type ProviderChain } from "./provider-chain.ts";
import { findTask } from "@gen/db";

// The chain through the Replicate adapter: submission -> worker -> replicate package -> the
// Replicate simulator -> files downloaded and stored under the CDN URL -> settlement -> the
// client's webhook. Binding port 443 for the receiver needs root (CI runs as root).
const canBind443 = process.getuid?.() === 0;
const maybe = canBind443 ? describe : describe.skip;
if (!canBind443) console.warn("replicate-chain: skipped, binding port 443 needs root");

const MODEL = {
  id: "replicate-flux-test",
  endpoint: "images",
  provider: "replicate",
  upstreamModel: "black-forest-labs/flux-schnell",
  upstreamUrl: "{sim}/replicate/v1",
  upstreamInput: { output_format: "png" },
  description: "Replicate image model behind the Replicate simulator.",
  contentFilter: false,
  maxPromptLength: 2000,
  sizes: ["512x512", "1024x1024"],
  defaultSize: "1024x1024",
  parameters: { type: "object", properties: { n: { type: "integer", minimum: 1, maximum: 4, default: 1, description: "Number of images." } } },
  pricing: { method: "flat", credits: 2, units: ["n"], multipliers: { size: { "512x512": 1, "1024x1024": 2 } } },
  moderationRefund: { output: 2 },
};

let chain: ProviderChain;

maybe("Replicate end to end", () => {
  beforeAll(async () => {
    chain = await startProviderChain([MODEL], { REPLICATE_API_TOKEN: "r8_e2e" });
  });
  afterAll(async () => {
    await chain?.close();
  });

  test("images are generated upstream, stored under the CDN URL, billed, and the webhook carries the task", async () => {
    const { stack, receiver } = chain;
    const user = await stack.user();
    const submitted = await stack.submit(user.auth, "/api/v1/images/generations", {
      model: MODEL.id,
      prompt: "a lighthouse at dawn",
      n: 2,
      size: "512x512",
      webhook_url: `https://${HOOK_HOST}/hooks/replicate`,
    });
    expect(submitted.status).toBe(202);
    const task = await stack.waitTerminal(user.auth, submitted.body.id);
    expect(task.status).toBe("completed");
    expect(task.output.image_urls).toHaveLength(2);
    for (const url of task.output.image_urls as string[]) {
      expect(url.startsWith(stack.config.cdnUrl)).toBe(true);
      const response = await fetch(url);
      expect(response.headers.get("content-type")).toBe("image/png");
      expect(
        Buffer.from(await response.arrayBuffer())
          .subarray(1, 4)
          .toString("latin1"),
      ).toBe("PNG");
    }
    const hook = await webhookFor(receiver, submitted.body.id);
    expect(hook).toMatchObject({ id: submitted.body.id, status: "completed", output: { image_urls: task.output.image_urls } });

    const row = (await findTask(stack.gateway.db, submitted.body.id))!;
    expect(row).toMatchObject({ upstreamProvider: "replicate", upstreamId: expect.stringMatching(/^[0-9a-f]{26}$/) });
    await ledgerHolds(stack, user.userId);
  }, 40_000);

  test("an NSFW verdict upstream is 80006 on the output, with Replicate's text kept for the operator only", async () => {
    const { stack } = chain;
    const user = await stack.user();
    const submitted = await stack.submit(user.auth, "/api/v1/images/generations", { model: MODEL.id, prompt: "x [[up:policy_output]]", size: "512x512" });
    const task = await stack.waitTerminal(user.auth, submitted.body.id);
    expect(task).toMatchObject({ status: "failed", error: { code: 80006 } });
    expect(JSON.stringify(task)).not.toContain("NSFW");
    const row = (await findTask(stack.gateway.db, submitted.body.id))!;
    expect(row.failureCause).toMatchObject({ message: expect.stringContaining("NSFW") });
    await ledgerHolds(stack, user.userId);
  }, 40_000);
});

let callbackChain: ProviderChain;

// The same chain with UPSTREAM_CALLBACK_URL set to the stack's own gateway: predictions are
// created with Replicate's `webhook`, and the simulator's `completed` webhook wakes the task.
maybe("Replicate end to end, woken by Replicate's webhook", () => {
  beforeAll(async () => {
    callbackChain = await startProviderChain([MODEL], { REPLICATE_API_TOKEN: "r8_e2e" }, { upstreamCallbacks: true });
  });
  afterAll(async () => {
    await callbackChain?.close();
  });

  test("a 2-s prediction completes on its webhook, long before the safety poll, and the client's webhook is the GET body", async () => {
    const { stack, receiver } = callbackChain;
    const user = await stack.user();
    const submitted = await stack.submit(user.auth, "/api/v1/images/generations", {
      model: MODEL.id,
      prompt: "a harbour at dusk [[up:delay_ms=2000]]",
      size: "512x512",
      webhook_url: `https://${HOOK_HOST}/hooks/replicate-callback`,
    });
    expect(submitted.status).toBe(202);
    // With a callback expected the worker's first poll comes only after CALLBACK_SAFETY_POLL_MS
    // (a minute): a task done within half of it was woken by the callback, not found by a poll.
    const task = await stack.waitTerminal(user.auth, submitted.body.id, CALLBACK_SAFETY_POLL_MS / 2);
    expect(task.status).toBe("completed");
    const row = (await findTask(stack.gateway.db, submitted.body.id))!;
    expect(row).toMatchObject({ upstreamProvider: "replicate", upstreamCallback: true });
    expect(task.output.image_urls).toHaveLength(1);
    for (const url of task.output.image_urls as string[]) {
      expect(url.startsWith(`${stack.config.cdnUrl}/`)).toBe(true);
      expect((await fetch(url)).headers.get("content-type")).toBe("image/png");
    }
    const hook = await webhookFor(receiver, submitted.body.id);
    const polled = await fetch(`${stack.baseUrl}/api/v1/tasks/${submitted.body.id}`, { headers: { Authorization: user.auth } });
    expect(hook).toEqual(await polled.json());
    await ledgerHolds(stack, user.userId);
  }, 40_000);

  test(
    "a lost webhook is made up for by the safety poll",
    async () => {
      const { stack } = callbackChain;
      const user = await stack.user();
      const started = Date.now();
      const submitted = await stack.submit(user.auth, "/api/v1/images/generations", {
        model: MODEL.id,
        prompt: "a harbour at night [[up:callback_lost]]",
        size: "512x512",
      });
      const task = await stack.waitTerminal(user.auth, submitted.body.id, CALLBACK_SAFETY_POLL_MS + 15_000);
      expect(task.status).toBe("completed");
      // Nothing woke it: the prediction was done at once, yet only the safety poll saw it.
      expect(Date.now() - started).toBeGreaterThanOrEqual(CALLBACK_SAFETY_POLL_MS - 1000);
      const row = (await findTask(stack.gateway.db, submitted.body.id))!;
      expect(row.upstreamCallback).toBe(true);
      await ledgerHolds(stack, user.userId);
    },
    CALLBACK_SAFETY_POLL_MS + 30_000,
  );
});
