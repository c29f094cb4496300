import { createWebhookReceiver, GenApiError, GenClient, type Task } from "@gen/client";
import { ledgerHolds, startStack, type Stack } from "./stack.ts";

let stack: Stack;
let user: { userId: string; auth: string };
let client: GenClient;

beforeAll(async () => {
  stack = await startStack({ GENERATION_TIMEOUT_MS: "10000" });
  stack.startWorker();
  user = await stack.user();
  client = new GenClient({ baseUrl: stack.baseUrl, apiKey: user.auth.replace(/^Bearer /, ""), pollBackoff: { initialMs: 25, maxMs: 200 } });
});
afterAll(() => stack.close());
afterEach(() => ledgerHolds(stack, user.userId));

const wait = <O>(task: Task<O>) => client.waitForTask(task, { timeoutMs: 20_000 });

describe("@gen/client against the running stack", () => {
  test("every submission endpoint, through to completed", async () => {
    const cdn = `${stack.config.cdnUrl}/`;
    const images = await wait(await client.images({ model: "sim-image-1", prompt: "a red fox", n: 2, size: "256x256" }));
    expect(images.status).toBe("completed");
    expect(images.output!.image_urls).toHaveLength(2);
    expect(images.output!.image_urls.every((u) => u.startsWith(cdn))).toBe(true);

    const videos = await wait(await client.videos({ model: "sim-video-1", prompt: "waves", duration_seconds: 1 }));
    expect(videos.output!.video_urls[0]!.startsWith(cdn)).toBe(true);

    const audio = await wait(await client.audio({ model: "sim-audio-1", prompt: "rain", duration_seconds: 1 }));
    expect(audio.output!.audio_urls[0]!.startsWith(cdn)).toBe(true);

    const detect = await wait(await client.detect({ model: "sim-detect-1", text: "Some text to check." }));
    expect(["ai", "human", "mixed"]).toContain(detect.output!.label);
    expect(detect.output!.ai_probability).toBeGreaterThanOrEqual(0);

    const humanize = await wait(await client.humanize({ model: "sim-humanize-1", text: "It is imperative to note." }));
    expect(typeof humanize.output!.text).toBe("string");

    const essay = await wait(await client.essay({ model: "sim-essay-1", prompt: "On bridges", max_words: 50 }));
    expect(essay.output!.word_count).toBeLessThanOrEqual(50);

    const moderation = await wait(await client.moderations({ model: "sim-moderation-1", input: ["hello", "world"] }));
    expect(typeof moderation.output!.flagged).toBe("boolean");

    for (const task of [images, videos, audio, detect, humanize, essay, moderation]) {
      expect(task).toMatchObject({ status: "completed", error: null });
      expect(task.id).toMatch(/^task_[0-9a-f]{32}$/);
    }
  });

  test("getTask with include, and without", async () => {
    const done = await wait(await client.detect({ model: "sim-detect-1", text: "include me" }));
    const full = await client.getTask(done.id, { include: ["webhook", "billing"] });
    expect(full.webhook).toBeNull(); // submitted without webhook_url
    expect(full.billing).toMatchObject({ method: "flat", charged_credits: full.usage.credits });
    expect(full.billing!.reserved_credits).toBe(full.billing!.charged_credits! + full.billing!.refunded_credits!);
    const plain = await client.getTask(done.id);
    expect(plain).not.toHaveProperty("webhook");
    expect(plain).not.toHaveProperty("billing");
  });

  test("a given Idempotency-Key returns the original task without a second charge", async () => {
    const before = await client.account();
    const key = `e2e-${Date.now()}`;
    const first = await client.humanize({ model: "sim-humanize-1", text: "once" }, { idempotencyKey: key });
    const again = await client.humanize({ model: "sim-humanize-1", text: "once" }, { idempotencyKey: key });
    expect(again.id).toBe(first.id);
    await wait(first);
    const after = await client.account();
    expect(before.credits - after.credits).toBe((await client.getTask(first.id)).usage.credits);
  });

  test("cancel a slow task: failed with 80008 and fully refunded", async () => {
    const before = await client.account();
    const slow = await client.images({ model: "sim-image-1", prompt: "x [[sim:delay_ms=5000]]" });
    const canceled = await client.cancel(slow.id);
    expect(canceled).toMatchObject({ id: slow.id, status: "failed", output: null, usage: { credits: 0 } });
    expect(canceled.error?.code).toBe(80008);
    expect((await wait(slow)).error?.code).toBe(80008);
    expect((await client.account()).credits).toBe(before.credits);
  });

  test("account returns the balance", async () => {
    const account = await client.account();
    expect(Number.isInteger(account.credits)).toBe(true);
    expect(account.credits).toBeGreaterThan(0);
  });

  test("errors carry status, code and request id", async () => {
    const missing = await client.images({ model: "sim-image-1" } as never).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(GenApiError);
    expect(missing).toMatchObject({ status: 400, code: 20002, retryable: false });
    expect((missing as GenApiError).requestId).toMatch(/^req_[0-9a-f]{24}$/);
    expect((missing as GenApiError).message).toContain("prompt");

    await expect(client.getTask("task_00000000000000000000000000000000")).rejects.toMatchObject({ status: 404, code: 40001 });
    const stranger = new GenClient({ baseUrl: stack.baseUrl, apiKey: "sk_not_a_key" });
    await expect(stranger.account()).rejects.toMatchObject({ status: 401, code: 10003 });
  });

  test("a failed task is returned by waitForTask with its workflow error", async () => {
    const failed = await wait(await client.essay({ model: "sim-essay-1", prompt: "no [[sim:fail=80003]]" }));
    expect(failed).toMatchObject({ status: "failed", output: null, usage: { credits: 0 } });
    expect(failed.error?.code).toBe(80003);
  });

  test("the webhook receiver verifies against the API and falls back to polling", async () => {
    const delivered: Task[] = [];
    const receiver = createWebhookReceiver({
      client,
      onTask: (task) => {
        delivered.push(task);
      },
      fallbackGraceMs: 0,
      checkIntervalMs: 20,
      fallbackPollBackoff: { initialMs: 25, maxMs: 200 },
    });
    try {
      const viaWebhook = await client.detect({ model: "sim-detect-1", text: "webhook" });
      const viaPoll = await client.detect({ model: "sim-detect-1", text: "poll" });
      receiver.track(viaWebhook, 60_000);
      receiver.track(viaPoll, 50);
      const body = await client.waitForTask(viaWebhook); // what the service would POST
      expect(receiver.handle(JSON.stringify(body))).toEqual({ status: 200, accepted: true });
      expect(receiver.handle(JSON.stringify({ ...body, id: "task_11111111111111111111111111111111" })).accepted).toBe(false);
      const end = Date.now() + 20_000;
      while (delivered.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      expect(delivered.map((t) => t.id).sort()).toEqual([viaWebhook.id, viaPoll.id].sort());
      expect(delivered.every((t) => t.status === "completed")).toBe(true);
    } finally {
      await receiver.close();
    }
  });
});
