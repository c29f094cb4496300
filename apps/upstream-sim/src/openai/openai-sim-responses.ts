import type { Endpoint } from "@gen/domain";
import { simulateGeneration } from "@gen/simulator";
import type { Router } from "express";
import { HUGE_ANSWER_BYTES, sendPaddedAnswer } from "../padded-answer.ts";
import { parseUpDirectives, type UpDirectives } from "../up-directives.ts";
import { remember, type OpenAISimContext } from "./openai-sim-context.ts";
import { OpenAIErrorType, isObject, openAIId, sendError, unixSeconds } from "./openai-sim-wire.ts";

interface TextJob {
  id: string;
  model: string;
  input: string;
  instructions: string;
  structured: boolean;
  background: boolean;
  metadata: Record<string, unknown>;
  createdAt: number;
  directives: UpDirectives;
  cancelled: boolean;
}

const REFUSAL = "I'm sorry, but I can't help with that request.";

/** Text of `input`: a string, or the text parts of input messages. */
function inputText(input: unknown): string | undefined {
  if (typeof input === "string") return input;
  if (!Array.isArray(input)) return undefined;
  const parts = input.flatMap((item: unknown) => {
    if (!isObject(item)) return [];
    if (typeof item.content === "string") return [item.content];
    if (!Array.isArray(item.content)) return [];
    return item.content.flatMap((part: unknown) => (isObject(part) && typeof part.text === "string" ? [part.text] : []));
  });
  return parts.length > 0 ? parts.join("\n") : undefined;
}

/**
 * The simulated model follows its instructions as far as the simulator can: a JSON-schema answer
 * is a detection, an essay is asked for by name (with its "at most N words"), anything else is a
 * rewrite.
 */
function answerOf(job: TextJob): string {
  let endpoint: Endpoint = "humanize";
  const params: Record<string, unknown> = { text: job.input };
  if (job.structured) endpoint = "detect";
  else if (/\bessay\b/i.test(job.instructions)) {
    endpoint = "essay";
    const words = /at most (\d{1,6}) words/i.exec(job.instructions)?.[1];
    Object.assign(params, { prompt: job.input, text: undefined, max_words: words === undefined ? undefined : Number(words) });
  }
  const data = simulateGeneration({ endpoint, model: job.model, params }).data ?? {};
  return endpoint === "detect" ? JSON.stringify(data) : String(data.text ?? "");
}

function tokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/**
 * `POST /v1/responses` (in the background or not), `GET /v1/responses/{id}`,
 * `POST /v1/responses/{id}/cancel`: the Response object with its status, output message
 * (`output_text` or `refusal`), usage and error, as the Responses API reference shows them.
 */
export function mountResponses(router: Router, context: OpenAISimContext): void {
  const jobs = new Map<string, TextJob>();

  const isDone = (job: TextJob) => !job.directives.hang && context.now() >= job.createdAt + context.defaultDelayMs + (job.directives.delayMs ?? 0);

  function view(job: TextJob): Record<string, unknown> {
    const head = {
      id: job.id,
      object: "response",
      created_at: unixSeconds(job.createdAt),
      model: job.model,
      instructions: job.instructions,
      background: job.background,
      metadata: job.metadata,
      error: null,
      incomplete_details: null,
      output: [] as unknown[],
      usage: null as unknown,
    };
    if (job.cancelled) return { ...head, status: "cancelled" };
    if (!isDone(job)) return { ...head, status: job.createdAt === context.now() ? "queued" : "in_progress" };
    if (job.directives.fail) return { ...head, status: "failed", error: { code: "server_error", message: "The model failed to generate a response." } };
    const text = job.directives.noUrls ? "" : answerOf(job);
    const part = job.directives.policyOutput ? { type: "refusal", refusal: REFUSAL } : { type: "output_text", text, annotations: [] };
    const usage = { input_tokens: tokens(job.instructions + job.input), output_tokens: tokens(job.directives.policyOutput ? REFUSAL : text) };
    return {
      ...head,
      status: "completed",
      completed_at: unixSeconds(context.now()),
      output: [{ type: "message", id: openAIId("msg_"), status: "completed", role: "assistant", content: [part] }],
      usage: {
        ...usage,
        total_tokens: usage.input_tokens + usage.output_tokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      },
    };
  }

  router.post("/v1/responses", (req, res) => {
    const body: unknown = req.body;
    const input = isObject(body) ? inputText(body.input) : undefined;
    if (!isObject(body) || typeof body.model !== "string" || body.model === "" || input === undefined) {
      sendError(res, 400, OpenAIErrorType.InvalidRequest, "Expected 'model' and 'input'.", { code: "missing_required_parameter", param: "input" });
      return;
    }
    if (body.background === true && body.store === false) {
      sendError(res, 400, OpenAIErrorType.InvalidRequest, "Background responses must be stored.", { code: "invalid_value", param: "store" });
      return;
    }
    const directives = parseUpDirectives(body.input);
    if (context.refuse(req, res, directives, "content_policy_violation")) return;
    const format = isObject(body.text) && isObject(body.text.format) ? body.text.format : undefined;
    const job: TextJob = {
      id: openAIId("resp_"),
      model: body.model,
      input,
      instructions: typeof body.instructions === "string" ? body.instructions : "",
      structured: format?.type === "json_schema",
      background: body.background === true,
      metadata: isObject(body.metadata) ? body.metadata : {},
      createdAt: context.now(),
      directives,
      cancelled: false,
    };
    // Without background the answer waits for the result; the simulator has it at once.
    if (!job.background) job.directives = { ...directives, delayMs: undefined, hang: false };
    remember(jobs, job.id, job, context.maxJobs);
    if (directives.hugeSubmit || directives.endlessSubmit) return sendPaddedAnswer(res, 200, view(job), directives.hugeSubmit ? HUGE_ANSWER_BYTES : Infinity);
    res.json(view(job));
  });

  router.get("/v1/responses/:id", (req, res) => {
    const job = jobs.get(req.params.id);
    if (!job) {
      sendError(res, 404, OpenAIErrorType.InvalidRequest, `Response with id '${req.params.id}' not found.`, { param: "response_id" });
      return;
    }
    const padded = job.directives.pollAnswer;
    if (padded && !job.cancelled) return sendPaddedAnswer(res, 200, view(job), padded === "huge" ? HUGE_ANSWER_BYTES : Infinity);
    res.json(view(job));
  });

  router.post("/v1/responses/:id/cancel", (req, res) => {
    const job = jobs.get(req.params.id);
    if (!job) {
      sendError(res, 404, OpenAIErrorType.InvalidRequest, `Response with id '${req.params.id}' not found.`, { param: "response_id" });
      return;
    }
    if (!job.background) {
      sendError(res, 400, OpenAIErrorType.InvalidRequest, "Only background responses can be cancelled.", { param: "response_id" });
      return;
    }
    // Idempotent, and a response that has already finished keeps its outcome.
    if (!isDone(job)) job.cancelled = true;
    res.json(view(job));
  });
}
