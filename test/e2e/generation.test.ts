import { ledgerHolds, startStack, type Stack } from "./stack.ts";
import { findTask } from "@gen/db";

let stack: Stack;
let user: { userId: string; auth: string };

beforeAll(async () => {
  // The submit retry budget ends well before the cap, so an outage at submit fails 80001 and never
  // races the cap (80002) at the last retry.
  stack = await startStack({ GENERATION_TIMEOUT_MS: "1500", UPSTREAM_SUBMIT_RETRY_MS: "300" });
  stack.startWorker();
  user = await stack.user();
});
afterAll(() => stack.close());
afterEach(() => ledgerHolds(stack, user.userId));

const MEDIA: [string, Record<string, unknown>, string, string][] = [
  ["/api/v1/images/generations", { model: "sim-image-1", prompt: "a red fox", n: 2, size: "256x256" }, "image_urls", "image/png"],
  ["/api/v1/videos/generations", { model: "sim-video-1", prompt: "waves", duration_seconds: 1 }, "video_urls", "video/mp4"],
  ["/api/v1/audio/generations", { model: "sim-audio-1", prompt: "rain", duration_seconds: 1 }, "audio_urls", "audio/wav"],
];

describe("happy paths through the gateway and the worker", () => {
  test.each(MEDIA)("%s stores media under CDN_URL and serves it", async (path, body, field, type) => {
    const submitted = await stack.submit(user.auth, path, body);
    expect(submitted.status).toBe(202);
    const task = await stack.waitTerminal(user.auth, submitted.body.id);
    expect(task).toMatchObject({ status: "completed", error: null });
    expect(task.usage.credits).toBe(task.billing.reserved_credits);
    expect(task.billing).toMatchObject({ method: "flat", refunded_credits: 0 });
    const urls: string[] = task.output[field];
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) {
      expect(url.startsWith(`${stack.config.cdnUrl}/`)).toBe(true);
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain(type);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(40);
    }
  });

  test.each([
    [
      "/api/v1/detect",
      { model: "sim-detect-1", text: "Some text to check for machine writing." },
      (o: any) => expect(["ai", "human", "mixed"]).toContain(o.label),
    ],
    ["/api/v1/humanize", { model: "sim-humanize-1", text: "It is what it is." }, (o: any) => expect(typeof o.text).toBe("string")],
    ["/api/v1/essay", { model: "sim-essay-1", prompt: "On bridges", max_words: 50 }, (o: any) => expect(o.word_count).toBeLessThanOrEqual(50)],
    ["/api/v1/moderations", { model: "sim-moderation-1", input: ["hello", "world"] }, (o: any) => expect(typeof o.flagged).toBe("boolean")],
  ])("%s completes with its output shape", async (path, body, check) => {
    const submitted = await stack.submit(user.auth, path, body);
    const task = await stack.waitTerminal(user.auth, submitted.body.id);
    expect(task.status).toBe("completed");
    check(task.output);
  });

  test("the same input gives the same output (deterministic simulated provider)", async () => {
    const a = await stack.waitTerminal(user.auth, (await stack.submit(user.auth, "/api/v1/detect", { model: "sim-detect-1", text: "same" })).body.id);
    const b = await stack.waitTerminal(user.auth, (await stack.submit(user.auth, "/api/v1/detect", { model: "sim-detect-1", text: "same" })).body.id);
    expect(a.output).toEqual(b.output);
  });
});

describe("exact token billing", () => {
  test("charged by tokens, at most the reservation", async () => {
    const task = await stack.waitTerminal(
      user.auth,
      (await stack.submit(user.auth, "/api/v1/images/generations", { model: "sim-image-1-tokens", prompt: "tokens please", size: "256x256" })).body.id,
    );
    expect(task.status).toBe("completed");
    expect(task.billing.method).toBe("tokens");
    expect(task.billing.tokens).toEqual({ input: expect.any(Number), output: expect.any(Number) });
    expect(task.usage.credits).toBeLessThanOrEqual(task.billing.reserved_credits);
    expect(task.usage.credits + task.billing.refunded_credits).toBe(task.billing.reserved_credits);
  });

  test("images but no token evidence: completes and charges the reservation (never 80009)", async () => {
    const task = await stack.waitTerminal(
      user.auth,
      (await stack.submit(user.auth, "/api/v1/images/generations", { model: "sim-image-1-tokens", prompt: "x [[sim:no_tokens]]" })).body.id,
    );
    expect(task.status).toBe("completed");
    expect(task.usage.credits).toBe(task.billing.reserved_credits);
    expect(task.billing.tokens).toBeNull();
  });
});

const FAILURES: [string, string, number, "zero" | "kept"][] = [
  ["80001 upstream submission failed", "[[sim:fail=80001]]", 80001, "zero"],
  ["80002 wall-clock cap", "[[sim:fail=80002]]", 80002, "zero"],
  ["80003 upstream terminal failure", "[[sim:fail=80003]]", 80003, "zero"],
  ["80004 completed without URLs", "[[sim:fail=80004]]", 80004, "zero"],
  ["80005 storage failure", "[[sim:fail=80005]]", 80005, "zero"],
  ["80006 at the input stage", "[[sim:fail=80006]] [[sim:stage=input]]", 80006, "zero"],
  ["80006 at the output stage", "[[sim:fail=80006]] [[sim:stage=output]]", 80006, "kept"],
  ["80007 input rejected", "[[sim:fail=80007]]", 80007, "zero"],
  ["80008 by directive", "[[sim:fail=80008]]", 80008, "zero"],
];

describe("workflow codes on the simulated provider", () => {
  test.each(FAILURES)("%s", async (_name, directive, code, charge) => {
    const submitted = await stack.submit(user.auth, "/api/v1/images/generations", { model: "sim-image-1", prompt: `a cat ${directive}` });
    const task = await stack.waitTerminal(user.auth, submitted.body.id);
    expect(task.status).toBe("failed");
    expect(task.output).toBeNull();
    expect(task.error).toEqual({ code, message: expect.any(String) });
    const model = stack.gateway.catalog.model("sim-image-1")!;
    const expected = charge === "zero" ? 0 : Math.min(model.moderationRefund.output, task.billing.reserved_credits);
    expect(task.usage.credits).toBe(expected);
    expect(task.billing.refunded_credits).toBe(task.billing.reserved_credits - expected);
  });
});

const UPSTREAM: [string, string, number | "completed"][] = [
  ["success", "", "completed"],
  ["submit 5xx", "[[up:submit_500]]", 80001],
  ["timeout", "[[up:hang]]", 80002],
  ["terminal failure", "[[up:fail]]", 80003],
  ["no URLs", "[[up:no_urls]]", 80004],
  ["output file unavailable", "[[up:bad_file]]", 80005],
  ["policy at input", "[[up:policy_input]]", 80006],
  ["policy at output", "[[up:policy_output]]", 80006],
  ["input rejected", "[[up:reject]]", 80007],
];

describe("HTTP provider against the upstream simulator", () => {
  test.each(UPSTREAM)("%s", async (_name, directive, expected) => {
    const submitted = await stack.submit(user.auth, "/api/v1/images/generations", { model: "upstream-image-1", prompt: `a boat ${directive}` });
    expect(submitted.status).toBe(202);
    const task = await stack.waitTerminal(user.auth, submitted.body.id);
    if (expected === "completed") {
      expect(task.status).toBe("completed");
      for (const url of task.output.image_urls) {
        expect(url.startsWith(stack.config.cdnUrl)).toBe(true);
        expect((await fetch(url)).status).toBe(200);
      }
    } else {
      expect(task.status).toBe("failed");
      expect(task.error.code).toBe(expected);
    }
  });
});

describe("cancel", () => {
  test("a running task fails with 80008, fully refunded; cancelling again returns it unchanged", async () => {
    const before = (await stack.get(user.auth, "/api/v1/account")).body.credits;
    const submitted = await stack.submit(user.auth, "/api/v1/images/generations", {
      model: "sim-image-1",
      prompt: "slow [[sim:delay_ms=10000]]",
      webhook_url: "https://hooks.example.com/x",
    });
    const id = submitted.body.id;
    for (let i = 0; i < 100; i++) {
      const row = (await findTask(stack.gateway.db, id))!;
      if (row.upstreamId) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const res = await fetch(`${stack.baseUrl}/api/v1/tasks/${id}/cancel`, { method: "POST", headers: { Authorization: user.auth } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ id, status: "failed", output: null, usage: { credits: 0 }, error: { code: 80008 } });
    expect((await stack.get(user.auth, "/api/v1/account")).body.credits).toBe(before);
    const again = await fetch(`${stack.baseUrl}/api/v1/tasks/${id}/cancel`, { method: "POST", headers: { Authorization: user.auth } });
    expect((await again.json()) as unknown).toEqual(body);
    // The hand-off scheduled delivery attempt 1.
    expect(await stack.gateway.webhookQueue.getJob(`${id}-a1`)).toBeDefined();
  });

  test("a completed task is returned unchanged; unknown ids are 40001", async () => {
    const task = await stack.waitTerminal(user.auth, (await stack.submit(user.auth, "/api/v1/detect", { model: "sim-detect-1", text: "x" })).body.id);
    const res = await fetch(`${stack.baseUrl}/api/v1/tasks/${task.id}/cancel`, { method: "POST", headers: { Authorization: user.auth } });
    expect(((await res.json()) as { status: string }).status).toBe("completed");
    const missing = await fetch(`${stack.baseUrl}/api/v1/tasks/task_00000000000000000000000000000000/cancel`, {
      method: "POST",
      headers: { Authorization: user.auth },
    });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: number } }).error.code).toBe(40001);
  });
});
