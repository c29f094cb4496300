import type { Response as OpenAIResponse } from "openai/resources/responses/responses";
import type { ProviderJob } from "../src/index.ts";
import { retryAfterMs } from "../src/openai/openai-error.ts";
import { imageRequest } from "../src/openai/openai-images.ts";
import { mergeVerdicts } from "../src/openai/openai-moderations.ts";
import { readResponse, responseRequest } from "../src/openai/openai-responses.ts";
import { videoRequest } from "../src/openai/openai-videos.ts";

// The OpenAI adapter's request and answer mappings on their own; the whole exchange through the
// SDK is tested against the OpenAI simulator in apps/upstream-sim.
const job = (endpoint: ProviderJob["endpoint"], params: Record<string, unknown>, extra: Partial<ProviderJob> = {}): ProviderJob => ({
  taskId: "task_1",
  endpoint,
  model: "m",
  params,
  ...extra,
});

function response(fields: Partial<OpenAIResponse>): OpenAIResponse {
  return { id: "resp_1", status: "completed", output: [], metadata: { endpoint: "essay" }, ...fields } as OpenAIResponse;
}

describe("OpenAI request mapping", () => {
  test("images: our quality words become gpt-image's, DALL·E keeps them; image_url and content_filter are not sent", () => {
    const params = { prompt: "p", n: 2, size: "1024x1024", quality: "hd", image_url: "https://x/a.png", content_filter: false };
    expect(imageRequest(job("images", params), "gpt-image-1")).toEqual({ model: "gpt-image-1", prompt: "p", n: 2, size: "1024x1024", quality: "high" });
    expect(imageRequest(job("images", params), "dall-e-3")).toMatchObject({ quality: "hd" });
    expect(imageRequest(job("images", { prompt: "p", quality: "standard" }, { constantInput: { response_format: "url" } }), "dall-e-3")).toEqual({
      model: "dall-e-3",
      prompt: "p",
      quality: "standard",
      response_format: "url",
    });
  });

  test("videos: seconds as a string, image_url as input_reference", () => {
    expect(videoRequest(job("videos", { prompt: "p", duration_seconds: 8, size: "1280x720", image_url: "https://x/a.png" }), "sora-2")).toEqual({
      model: "sora-2",
      prompt: "p",
      seconds: "8",
      size: "1280x720",
      input_reference: { image_url: "https://x/a.png" },
    });
  });

  test("text endpoints: background, stored, max_words in the instructions, metadata for the poll; detect asks for the schema", () => {
    const essay = responseRequest({ ...job("essay", { prompt: "tides", max_words: 300 }), endpoint: "essay" }, "gpt-4.1-mini");
    expect(essay).toMatchObject({ model: "gpt-4.1-mini", input: "tides", background: true, store: true, metadata: { endpoint: "essay", task_id: "task_1" } });
    expect(essay.instructions).toContain("at most 300 words");
    expect(essay).not.toHaveProperty("max_words");
    const detect = responseRequest({ ...job("detect", { text: "t" }), endpoint: "detect" }, "gpt-4.1-mini");
    expect(detect).toMatchObject({ input: "t", text: { format: { type: "json_schema", strict: true } } });
    const own = responseRequest(
      { ...job("humanize", { text: "t" }, { constantInput: { instructions: "Mine", metadata: { endpoint: "x" } } }), endpoint: "humanize" },
      "m",
    );
    expect(own).toMatchObject({ instructions: "Mine", metadata: { endpoint: "humanize" } });
  });
});

describe("OpenAI answer mapping", () => {
  test("Retry-After: retry-after-ms first, then seconds or an HTTP date", () => {
    expect(retryAfterMs(new Headers({ "retry-after-ms": "250", "retry-after": "9" }))).toBe(250);
    expect(retryAfterMs(new Headers({ "retry-after": "2" }))).toBe(2000);
    expect(retryAfterMs(new Headers({ "retry-after": new Date(10_000).toUTCString() }), 4000)).toBe(6000);
    expect(retryAfterMs(new Headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(retryAfterMs(new Headers())).toBeUndefined();
  });

  test("moderations: one input as returned; several merged (any flag, highest score)", () => {
    const a = { flagged: false, categories: { hate: false, violence: false }, category_scores: { hate: 0.1, violence: 0.2 } };
    const b = { flagged: true, categories: { hate: true, violence: false }, category_scores: { hate: 0.9, violence: 0.1 } };
    expect(mergeVerdicts([a])).toEqual(a);
    expect(mergeVerdicts([a, b])).toEqual({ flagged: true, categories: { hate: true, violence: false }, category_scores: { hate: 0.9, violence: 0.2 } });
    expect(mergeVerdicts([])).toBeUndefined();
  });

  test("responses: incomplete by content_filter is 80006 output; by max_output_tokens 80003; off-schema detection 80003", () => {
    expect(readResponse(response({ status: "incomplete", incomplete_details: { reason: "content_filter" } }))).toMatchObject({ code: 80006, stage: "output" });
    expect(readResponse(response({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } }))).toMatchObject({
      code: 80003,
      upstream: { message: "incomplete: max_output_tokens" },
    });
    const detect = (text: string) =>
      readResponse(
        response({
          metadata: { endpoint: "detect" },
          output: [{ type: "message", id: "m", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] }],
        }),
      );
    expect(detect('{"ai_probability": 1.2, "label": "ai"}')).toMatchObject({ state: "completed", data: { ai_probability: 1, label: "ai" } });
    expect(detect('{"ai_probability": "high", "label": "ai"}')).toMatchObject({ state: "failed", code: 80003 });
    expect(detect("not json")).toMatchObject({ state: "failed", code: 80003 });
  });

  test("responses: failed with a policy code is 80006 output, with an input code 80007, otherwise 80003; no text is no output", () => {
    const failed = (code: string) => readResponse(response({ status: "failed", error: { code, message: "m" } as OpenAIResponse["error"] }));
    expect(failed("bio_policy")).toMatchObject({ code: 80006, stage: "output" });
    expect(failed("invalid_prompt")).toMatchObject({ code: 80007, upstream: { message: "invalid_prompt: m" } });
    expect(failed("server_error")).toMatchObject({ code: 80003 });
    expect(readResponse(response({ status: "cancelled" }))).toMatchObject({ code: 80003 });
    expect(readResponse(response({ usage: { input_tokens: 3, output_tokens: 0 } as OpenAIResponse["usage"] }))).toEqual({
      state: "completed",
      tokens: { input: 3, output: 0 },
    });
  });
});
