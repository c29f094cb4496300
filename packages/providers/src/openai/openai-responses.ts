import type { Endpoint } from "@gen/domain";
import { Wf } from "@gen/errors";
import type OpenAI from "openai";
import type { Response as OpenAIResponse, ResponseCreateParamsNonStreaming } from "openai/resources/responses/responses";
import { mapInput } from "../map-input.ts";
import type { CompletedResult, ProviderJob, ProviderResult, Submitted } from "../provider.ts";
import { pollError, submitError } from "./openai-error.ts";
import { jobFailure, terminalFailure } from "./openai-job-failure.ts";
import { tokensOf } from "../token-counts.ts";

export type TextEndpoint = Extract<Endpoint, "essay" | "humanize" | "detect">;

const DEFAULT_MAX_WORDS = 500;
const AI_THRESHOLD = 0.7;
const HUMAN_THRESHOLD = 0.3;

/** The structured answer of a detection: our detect output, which OpenAI fills in to this schema. */
const DETECT_FORMAT = {
  type: "json_schema",
  name: "ai_text_detection",
  strict: true,
  schema: {
    type: "object",
    properties: { ai_probability: { type: "number", minimum: 0, maximum: 1 }, label: { type: "string", enum: ["ai", "human", "mixed"] } },
    required: ["ai_probability", "label"],
    additionalProperties: false,
  },
} as const;

function instructionsFor(endpoint: TextEndpoint, params: Record<string, unknown>): string {
  switch (endpoint) {
    case "essay": {
      const maxWords = typeof params.max_words === "number" ? params.max_words : DEFAULT_MAX_WORDS;
      return `Write an essay on the topic the user gives, at most ${maxWords} words long. Answer with the essay only: plain text, paragraphs separated by a blank line, no title.`;
    }
    case "humanize":
      return "Rewrite the user's text so that it reads as natural human writing: plain words, contractions, varied sentences. Keep its meaning, its language and about its length. Answer with the rewritten text only.";
    case "detect":
      return `Estimate how likely it is that the user's text was written by an AI model. Give ai_probability between 0 and 1, and label "ai" at or above ${AI_THRESHOLD}, "human" at or below ${HUMAN_THRESHOLD}, "mixed" between.`;
  }
}

/**
 * The Responses request of a text job: the content as `input`, the endpoint's task as
 * `instructions` (a catalog `upstreamInput` may replace them), run in background mode so that
 * the submit returns at once and the worker polls, as it does for any job: an essay can take
 * longer than one request may. `metadata.endpoint` tells a later poll how to read the answer.
 */
export function responseRequest(job: ProviderJob & { endpoint: TextEndpoint }, model: string): Record<string, unknown> {
  const input = mapInput(job, { prompt: "input", text: "input", max_words: null });
  return {
    model,
    instructions: instructionsFor(job.endpoint, job.params),
    ...(job.endpoint === "detect" ? { text: { format: DETECT_FORMAT } } : {}),
    ...input,
    // Background responses must be stored to be read back.
    background: true,
    store: true,
    metadata: { endpoint: job.endpoint, task_id: job.taskId },
  };
}

export async function submitResponse(client: OpenAI, job: ProviderJob & { endpoint: TextEndpoint }, model: string, signal?: AbortSignal): Promise<Submitted> {
  const body = responseRequest(job, model) as unknown as ResponseCreateParamsNonStreaming;
  let created: OpenAIResponse;
  try {
    created = await client.responses.create(body, { signal });
  } catch (error) {
    throw submitError(error, signal);
  }
  if (typeof created.id !== "string" || created.id === "") throw submitError(new Error("OpenAI answered without a response id"), signal);
  // A background request normally answers `queued`, but it may already be done.
  const result = readResponse(created);
  return result.state === "running" ? { upstreamId: created.id } : { upstreamId: created.id, result };
}

function outputText(response: OpenAIResponse): { text: string; refusal?: string } {
  let text = "";
  for (const item of response.output ?? []) {
    if (item.type !== "message") continue;
    for (const part of item.content ?? []) {
      if (part.type === "refusal") return { text, refusal: part.refusal };
      if (part.type === "output_text") text += part.text;
    }
  }
  return { text };
}

function countWords(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

function detectData(text: string): Record<string, unknown> | undefined {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { ai_probability: probability, label } = (answer ?? {}) as { ai_probability?: unknown; label?: unknown };
  if (typeof probability !== "number" || !Number.isFinite(probability)) return undefined;
  if (label !== "ai" && label !== "human" && label !== "mixed") return undefined;
  return { ai_probability: Math.min(1, Math.max(0, probability)), label };
}

/** The completed answer as the endpoint's output: `{text, word_count}`, `{text}` or `{ai_probability, label}`. */
function completed(response: OpenAIResponse): ProviderResult {
  const { text, refusal } = outputText(response);
  if (refusal !== undefined) return { state: "failed", code: Wf.ContentPolicy, stage: "output", upstream: { message: `refusal: ${refusal}`.slice(0, 500) } };
  const result: CompletedResult = { state: "completed" };
  const tokens = tokensOf(response.usage);
  if (tokens) result.tokens = tokens;
  const trimmed = text.trim();
  if (trimmed === "") return result;
  switch (response.metadata?.endpoint) {
    case "essay":
      result.data = { text: trimmed, word_count: countWords(trimmed) };
      return result;
    case "humanize":
      result.data = { text: trimmed };
      return result;
    case "detect": {
      const data = detectData(trimmed);
      if (!data) return terminalFailure("the structured answer does not match the detection schema");
      result.data = data;
      return result;
    }
    default:
      return terminalFailure(`the response was not created for a text endpoint (metadata.endpoint ${JSON.stringify(response.metadata?.endpoint)})`);
  }
}

export function readResponse(response: OpenAIResponse): ProviderResult {
  switch (response.status) {
    case "queued":
    case "in_progress":
      return { state: "running" };
    case "completed":
      return completed(response);
    case "incomplete": {
      const reason = response.incomplete_details?.reason;
      if (reason === "content_filter") return { state: "failed", code: Wf.ContentPolicy, stage: "output", upstream: { message: "incomplete: content_filter" } };
      return terminalFailure(`incomplete: ${reason ?? "no reason given"}`);
    }
    case "failed":
      return jobFailure(response.error);
    case "cancelled":
      return terminalFailure("the response was cancelled");
    default:
      return terminalFailure(`unknown response status ${JSON.stringify(response.status)}`);
  }
}

export async function pollResponse(client: OpenAI, id: string, signal?: AbortSignal): Promise<ProviderResult> {
  try {
    return readResponse(await client.responses.retrieve(id, {}, { signal }));
  } catch (error) {
    const failure = pollError(error, signal);
    if (failure instanceof Error) throw failure;
    return { state: "failed", code: Wf.UpstreamFailed, upstream: { ...failure.notFound, message: "OpenAI does not know the response" } };
  }
}

export async function cancelResponse(client: OpenAI, id: string): Promise<void> {
  await client.responses.cancel(id);
}
