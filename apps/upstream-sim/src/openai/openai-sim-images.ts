import { setTimeout as delay } from "node:timers/promises";
import type { ProviderFile } from "@gen/providers";
import { simulateGeneration } from "@gen/simulator";
import type { Router } from "express";
import { HUGE_ANSWER_BYTES, sendPaddedAnswer } from "../padded-answer.ts";
import { parseUpDirectives } from "../up-directives.ts";
import { remember, type OpenAISimContext } from "./openai-sim-context.ts";
import { OpenAIErrorType, isObject, mountBase, openAIId, sendError, unixSeconds } from "./openai-sim-wire.ts";

const KEPT_IMAGE_SETS = 64;

/**
 * `POST /v1/images/generations`: the images in the answer itself, base64 (`b64_json`, gpt-image's
 * only form) or, with `response_format: "url"` (DALL·E), as URLs served by `GET /files/...`, the
 * stand-in for OpenAI's storage. Token usage as gpt-image reports it.
 */
export function mountImages(router: Router, context: OpenAISimContext): void {
  const imageSets = new Map<string, ProviderFile[]>();

  router.post("/v1/images/generations", async (req, res) => {
    const body: unknown = req.body;
    if (!isObject(body) || typeof body.prompt !== "string" || body.prompt === "") {
      sendError(res, 400, OpenAIErrorType.InvalidRequest, "Missing required parameter: 'prompt'.", { code: "missing_required_parameter", param: "prompt" });
      return;
    }
    const directives = parseUpDirectives(body);
    if (context.refuse(req, res, directives, "content_policy_violation")) return;
    if (directives.hang) return; // never answers: the client's timeout ends it
    const waitMs = context.defaultDelayMs + (directives.delayMs ?? 0);
    if (waitMs > 0) await delay(waitMs);
    const model = typeof body.model === "string" ? body.model : "dall-e-2";
    const result = simulateGeneration({ endpoint: "images", model, params: { prompt: body.prompt, n: body.n, size: body.size, quality: body.quality } });
    const files = directives.noUrls ? [] : (result.files ?? []);
    let data: Array<Record<string, string>>;
    if (body.response_format === "url") {
      const id = openAIId("img_");
      remember(imageSets, id, files, KEPT_IMAGE_SETS);
      data = files.map((file, index) => ({ url: `${mountBase(req, context.publicUrl)}/files/${id}/${index}.${file.extension}` }));
    } else {
      // A hostile upstream's "image" is an HTML page.
      const bytes = (file: ProviderFile) => (directives.mislabel ? Buffer.from("<!doctype html><script>alert(1)</script>") : file.data);
      data = files.map((file) => ({ b64_json: bytes(file).toString("base64") }));
    }
    const usage = result.tokens && {
      input_tokens: result.tokens.input,
      output_tokens: result.tokens.output,
      total_tokens: result.tokens.input + result.tokens.output,
      input_tokens_details: { text_tokens: result.tokens.input, image_tokens: 0 },
    };
    const answer = { created: unixSeconds(context.now()), data, ...(usage ? { usage } : {}) };
    if (directives.hugeSubmit || directives.endlessSubmit) return sendPaddedAnswer(res, 200, answer, directives.hugeSubmit ? HUGE_ANSWER_BYTES : Infinity);
    res.json(answer);
  });

  router.get("/files/:id/:name", (req, res) => {
    const match = /^(\d{1,3})\.([a-z0-9]+)$/.exec(req.params.name);
    const file = match ? imageSets.get(req.params.id)?.[Number(match[1])] : undefined;
    if (!file || file.extension !== match?.[2]) {
      sendError(res, 404, OpenAIErrorType.InvalidRequest, "No such file");
      return;
    }
    res.set("Content-Type", file.contentType).set("Cache-Control", "no-store").send(file.data);
  });
}
