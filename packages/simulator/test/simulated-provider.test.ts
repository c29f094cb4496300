import { WorkflowError } from "@gen/errors";
import type { Endpoint } from "@gen/domain";
import { PolicyViolation, hasOutput, type Provider, type ProviderJob, type ProviderResult } from "@gen/providers";
import { SIM_BASE_DELAY_MS, STORAGE_FAULT_EXTENSION, createSimulatedProvider, isStorageFault } from "../src/index.ts";
import { readPng } from "./media-readers.ts";

function clock(start = 1_000_000) {
  let time = start;
  return { now: () => time, advance: (ms: number) => (time += ms) };
}

function job(endpoint: Endpoint, params: Record<string, unknown>, model = `sim-${endpoint}-1`): ProviderJob {
  return { taskId: "task_0123456789abcdef0123456789abcdef", endpoint, model, params };
}

/** Submits, moves the clock past the base delay and polls once. */
async function run(provider: Provider, time: ReturnType<typeof clock>, j: ProviderJob): Promise<ProviderResult> {
  const { upstreamId } = await provider.submit(j);
  time.advance(SIM_BASE_DELAY_MS);
  return provider.poll(upstreamId);
}

function completed(result: ProviderResult) {
  if (result.state !== "completed") throw new Error(`expected completed, got ${JSON.stringify(result)}`);
  return result;
}

describe("simulated provider outputs", () => {
  const time = clock();
  const provider = createSimulatedProvider({ now: time.now });

  it("images: n PNGs of `size`, with token usage", async () => {
    const result = completed(
      await run(provider, time, job("images", { prompt: "a lighthouse at dusk", n: 2, size: "256x256", quality: "hd" }, "sim-image-1-tokens")),
    );
    expect(result.files?.map((f) => readPng(f.data)).map((p) => [p.width, p.height])).toEqual([
      [256, 256],
      [256, 256],
    ]);
    expect(result.tokens).toEqual({ input: 5, output: 2 * 64 * 2 });
    expect(hasOutput("images", result)).toBe(true);
  });

  it("videos and audio: one file each", async () => {
    const video = completed(await run(provider, time, job("videos", { prompt: "sea", duration_seconds: 1 })));
    expect(video.files?.map((f) => f.extension)).toEqual(["mp4"]);
    const audio = completed(await run(provider, time, job("audio", { prompt: "hum", duration_seconds: 1 })));
    expect(audio.files?.map((f) => [f.extension, f.contentType])).toEqual([["wav", "audio/wav"]]);
  });

  it("detect: a probability and the label its thresholds give", async () => {
    for (const text of ["I wrote this myself on the train.", "Furthermore, we must delve into the tapestry. Moreover, it is crucial.", "hello", "abc def"]) {
      const { data } = completed(await run(provider, time, job("detect", { text })));
      const p = data?.ai_probability as number;
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThanOrEqual(1);
      expect(data?.label).toBe(p >= 0.7 ? "ai" : p <= 0.3 ? "human" : "mixed");
    }
  });

  it("humanize: a light rewrite of the text", async () => {
    const { data } = completed(await run(provider, time, job("humanize", { text: "However, it is not wise to utilize numerous tools. We do not know." })));
    expect(data).toEqual({ text: "But, it isn't wise to use many tools. We don't know." });
  });

  it("essay: at most max_words, and word_count is the real count", async () => {
    for (const maxWords of [50, 120, 500]) {
      const { data } = completed(await run(provider, time, job("essay", { prompt: "The history of the bicycle", max_words: maxWords })));
      const text = data?.text as string;
      const count = text.split(/\s+/).filter(Boolean).length;
      expect(data?.word_count).toBe(count);
      expect(count).toBeLessThanOrEqual(maxWords);
      expect(count).toBeGreaterThan(maxWords * 0.6);
      expect(text).toContain("bicycle");
    }
    const tiny = completed(await run(provider, time, job("essay", { prompt: "cats", max_words: 3 })));
    expect(tiny.data?.word_count).toBe(3);
  });

  it("moderations: flags a category when one of its words appears, over every input string", async () => {
    const clean = completed(await run(provider, time, job("moderations", { input: "What a lovely day for a picnic." })));
    expect(clean.data?.flagged).toBe(false);
    expect(Object.keys(clean.data?.categories as object)).toEqual(expect.arrayContaining(["hate", "violence", "self-harm", "sexual", "harassment"]));
    const flagged = completed(await run(provider, time, job("moderations", { input: ["a nice walk", "I will kill the lights"] })));
    const categories = flagged.data?.categories as Record<string, boolean>;
    const scores = flagged.data?.category_scores as Record<string, number>;
    expect(flagged.data?.flagged).toBe(true);
    expect(categories.violence).toBe(true);
    expect(categories.hate).toBe(false);
    expect(scores.violence).toBeGreaterThan(0.5);
    expect(scores.hate).toBeLessThan(0.5);
  });

  it("directives do not show in text output", async () => {
    const { data } = completed(await run(provider, time, job("humanize", { text: "We are here. [[sim:delay_ms=0]]" })));
    expect(data).toEqual({ text: "We're here." });
  });
});

describe("simulated provider determinism and crash safety", () => {
  it("gives the same bytes for the same input, whatever the task id, time or key order", async () => {
    const a = clock(1);
    const b = clock(999_999);
    const first = completed(await run(createSimulatedProvider({ now: a.now }), a, job("images", { prompt: "p", size: "256x256", n: 2 })));
    const second = completed(
      await run(createSimulatedProvider({ now: b.now }), b, {
        ...job("images", { n: 2, size: "256x256", prompt: "p" }),
        taskId: "task_ffffffffffffffffffffffffffffffff",
      }),
    );
    expect(second.files?.map((f) => f.data)).toEqual(first.files?.map((f) => f.data));
    const other = completed(await run(createSimulatedProvider({ now: b.now }), b, job("images", { prompt: "q", size: "256x256", n: 2 })));
    expect(other.files?.[0]?.data.equals(first.files?.[0]?.data ?? Buffer.alloc(0))).toBe(false);
  });

  it("lets another process poll an upstream id: same timing, same result", async () => {
    const time = clock();
    const { upstreamId } = await createSimulatedProvider({ now: time.now }).submit(job("audio", { prompt: "x [[sim:delay_ms=500]]", duration_seconds: 1 }));
    const survivor = createSimulatedProvider({ now: time.now });
    time.advance(400);
    expect(await survivor.poll(upstreamId)).toEqual({ state: "running" });
    time.advance(200);
    const result = completed(await survivor.poll(upstreamId));
    const fresh = createSimulatedProvider({ now: time.now });
    const again = await fresh.submit(job("audio", { prompt: "x [[sim:delay_ms=500]]", duration_seconds: 1 }));
    time.advance(600);
    expect(completed(await fresh.poll(again.upstreamId)).files?.[0]?.data).toEqual(result.files?.[0]?.data);
  });

  it("answers a malformed upstream id with a terminal failure", async () => {
    const provider = createSimulatedProvider();
    expect(await provider.poll("sim_not-base64-deflate")).toMatchObject({ state: "failed", code: 80003 });
    expect(await provider.poll("upj_123")).toMatchObject({ state: "failed", code: 80003 });
  });
});

describe("simulated provider timing", () => {
  it("completes within ~50 ms of real time without directives", async () => {
    const provider = createSimulatedProvider();
    const { upstreamId } = await provider.submit(job("detect", { text: "hi" }));
    const started = Date.now();
    let result = await provider.poll(upstreamId);
    while (result.state === "running" && Date.now() - started < 5000) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      result = await provider.poll(upstreamId);
    }
    expect(result.state).toBe("completed");
  });

  it("delays completion with delay_ms and with the job's delayMs", async () => {
    const time = clock();
    const provider = createSimulatedProvider({ now: time.now });
    const { upstreamId } = await provider.submit({ ...job("detect", { text: "[[sim:delay_ms=1000]] hi" }), delayMs: 500 });
    time.advance(SIM_BASE_DELAY_MS + 1499);
    expect(await provider.poll(upstreamId)).toEqual({ state: "running" });
    time.advance(1);
    expect((await provider.poll(upstreamId)).state).toBe("completed");
  });
});

describe("simulated provider directives", () => {
  const time = clock();
  const provider = createSimulatedProvider({ now: time.now });

  it("80001: submit throws WorkflowError(80001)", async () => {
    await expect(provider.submit(job("images", { prompt: "[[sim:fail=80001]]" }))).rejects.toMatchObject({ name: "WorkflowError", code: 80001 });
  });

  it("80007: submit throws WorkflowError(80007)", async () => {
    const error = await provider.submit(job("essay", { prompt: "x [[sim:fail=80007]]" })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowError);
    expect(error).not.toBeInstanceOf(PolicyViolation);
    expect((error as WorkflowError).code).toBe(80007);
  });

  it("80006 input stage: submit throws PolicyViolation with stage input", async () => {
    const error = await provider.submit(job("images", { prompt: "[[sim:fail=80006]] [[sim:stage=input]]" })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PolicyViolation);
    expect(error).toBeInstanceOf(WorkflowError);
    expect(error).toMatchObject({ code: 80006, stage: "input" });
  });

  it("80006 output stage (the default): a failed result after the generation time", async () => {
    for (const prompt of ["[[sim:fail=80006]]", "[[sim:fail=80006]][[sim:stage=output]]"]) {
      const { upstreamId } = await provider.submit(job("videos", { prompt }));
      expect(await provider.poll(upstreamId)).toEqual({ state: "running" });
      time.advance(SIM_BASE_DELAY_MS);
      expect(await provider.poll(upstreamId)).toMatchObject({ state: "failed", code: 80006, stage: "output" });
    }
  });

  it("80002: stays running forever", async () => {
    const { upstreamId } = await provider.submit(job("audio", { prompt: "[[sim:fail=80002]]" }));
    time.advance(365 * 24 * 3600 * 1000);
    expect(await provider.poll(upstreamId)).toEqual({ state: "running" });
  });

  it("80003: a terminal failed result", async () => {
    expect(await run(provider, time, job("detect", { text: "[[sim:fail=80003]]" }))).toMatchObject({ state: "failed", code: 80003 });
  });

  it("80004: completed without files, urls or data", async () => {
    for (const endpoint of ["images", "videos", "audio", "essay"] as const) {
      const result = completed(await run(provider, time, job(endpoint, { prompt: "[[sim:fail=80004]]" })));
      expect(result).toEqual({ state: "completed" });
      expect(hasOutput(endpoint, result)).toBe(false);
    }
  });

  it("80005: completed normally plus a file the storage step must refuse", async () => {
    const result = completed(await run(provider, time, job("images", { prompt: "[[sim:fail=80005]]", size: "256x256" })));
    expect(result.files?.map((f) => f.extension)).toEqual([STORAGE_FAULT_EXTENSION, "png"]);
    expect(result.files?.map(isStorageFault)).toEqual([true, false]);
    const text = completed(await run(provider, time, job("detect", { text: "[[sim:fail=80005]]" })));
    expect(text.files?.some(isStorageFault)).toBe(true);
    expect(text.data?.label).toBeDefined();
  });

  it("80008: a failed result with that code", async () => {
    expect(await run(provider, time, job("detect", { text: "[[sim:fail=80008]]" }))).toMatchObject({ state: "failed", code: 80008 });
    expect(await run(provider, time, job("images", { prompt: "x [[sim:fail=80008]]", size: "256x256" }))).toMatchObject({ state: "failed", code: 80008 });
  });

  it("80009 and unknown codes are ignored", async () => {
    for (const code of ["80009", "12345", "abc"]) {
      expect((await run(provider, time, job("detect", { text: `[[sim:fail=${code}]]` }))).state).toBe("completed");
    }
  });

  it("no_tokens: an image result without token usage", async () => {
    const result = completed(await run(provider, time, job("images", { prompt: "[[sim:no_tokens]] x", size: "256x256" }, "sim-image-1-tokens")));
    expect(result.files).toHaveLength(1);
    expect(result.tokens).toBeUndefined();
  });

  it("reads directives from any string param, not only the prompt", async () => {
    await expect(provider.submit(job("images", { prompt: "plain", image_url: "https://example.test/a.png?[[sim:fail=80001]]" }))).rejects.toMatchObject({
      code: 80001,
    });
    await expect(provider.submit(job("moderations", { input: ["ok", "[[sim:fail=80007]]"] }))).rejects.toMatchObject({ code: 80007 });
  });
});

describe("simulated provider cancel and abort", () => {
  it("cancel is idempotent and ends the job as failed in this process", async () => {
    const time = clock();
    const provider = createSimulatedProvider({ now: time.now });
    const { upstreamId } = await provider.submit(job("detect", { text: "x" }));
    await provider.cancel(upstreamId);
    await provider.cancel(upstreamId);
    time.advance(SIM_BASE_DELAY_MS);
    expect(await provider.poll(upstreamId)).toMatchObject({ state: "failed", code: 80003 });
    await expect(provider.cancel("garbage")).resolves.toBeUndefined();
  });

  it("an aborted signal rejects with its reason, not a WorkflowError", async () => {
    const provider = createSimulatedProvider();
    const controller = new AbortController();
    controller.abort(new Error("shutting down"));
    await expect(provider.submit(job("detect", { text: "x" }), controller.signal)).rejects.toThrow("shutting down");
    await expect(provider.poll("sim_x", controller.signal)).rejects.toThrow("shutting down");
  });
});
