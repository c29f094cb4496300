import { MEDIA_ENDPOINTS, type Endpoint, type ProviderKind } from "@gen/domain";
import type { Wf } from "@gen/errors";
import type { UpstreamCause } from "./upstream-cause.ts";

/** Which adapter serves an upstream route (catalog `provider`); the list is @gen/domain's PROVIDER_KINDS. */
export type { ProviderKind };

export interface ProviderJob {
  taskId: string;
  endpoint: Endpoint;
  model: string;
  /** Name the upstream knows the model by (catalog `upstreamModel`); `model` when absent. */
  upstreamModel?: string;
  /** The validated request body minus `webhook_url`; the text is in `prompt`, `text` or `input`. */
  params: Record<string, unknown>;
  /** Catalog `upstreamInputMap`: our parameter name -> the provider's input name (null drops it), over the adapter's default. */
  inputMap?: Record<string, string | null>;
  /** Catalog `upstreamInput`: constant inputs laid over the mapped ones. */
  constantInput?: Record<string, unknown>;
  /** Extra time the simulated provider takes (catalog `simulatedDelayMs`); other providers ignore it. */
  delayMs?: number;
  /**
   * Set when UPSTREAM_CALLBACK_URL is: the address (with the task's token) the provider should
   * call when the job finishes. An adapter whose API has a webhook option passes it there.
   */
  callbackUrl?: string;
}

export type ProviderFile = { contentType: string; extension: string; data: Buffer };

export type ProviderResult =
  | { state: "running" }
  | {
      state: "completed";
      files?: ProviderFile[];
      urls?: string[];
      data?: Record<string, unknown>;
      tokens?: { input: number; output: number };
    }
  | {
      state: "failed";
      code: typeof Wf.UpstreamFailed | typeof Wf.ContentPolicy | typeof Wf.InputRejected | typeof Wf.Canceled;
      stage?: "input" | "output";
      message?: string;
      /** What the provider said, for the operator (console, logs); never in the public error. */
      upstream?: UpstreamCause;
    };

export type CompletedResult = Extract<ProviderResult, { state: "completed" }>;

export interface Submitted {
  upstreamId: string;
  /** The answer of a synchronous API (OpenAI Images, Moderations): the worker takes it instead of polling. */
  result?: ProviderResult;
  /** True when the job was created with `callbackUrl` as its webhook: the worker then polls only as a safety net. */
  callback?: boolean;
}

/** What every adapter factory takes. */
export interface ProviderOptions {
  /** The API base as the provider's SDK takes it (catalog `upstreamUrl`); absent: the SDK's default. */
  baseUrl?: string;
  /** The credential (REPLICATE_API_TOKEN, FAL_KEY, OPENAI_API_KEY, RUNWAYML_API_SECRET). */
  apiKey?: string;
  /** Time limit of one request (UPSTREAM_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Largest answer body read (UPSTREAM_MAX_RESPONSE_BYTES); a longer one is a failed request. */
  maxResponseBytes?: number;
}

export interface Provider {
  /**
   * Starts the upstream job. Throws ProviderUnavailableError when there was no usable answer
   * (network error, timeout, 429, 5xx; with `retryAfterMs` when the provider said how long to
   * wait): the worker retries it within its budget or moves to a fallback. Throws
   * UpstreamRejection(80007) when the input is rejected and PolicyViolation (80006, stage "input")
   * for a policy verdict at submit.
   */
  submit(job: ProviderJob, signal?: AbortSignal): Promise<Submitted>;
  /**
   * Resolves with the upstream's answer. Rejects only when there was no answer (network error,
   * timeout, 429, 5xx): ProviderUnavailableError, which is transient, so poll again later
   * (after `retryAfterMs` when set).
   */
  poll(upstreamId: string, signal?: AbortSignal): Promise<ProviderResult>;
  /** Best effort and idempotent: never rejects. */
  cancel(upstreamId: string): Promise<void>;
}

/**
 * Whether a completed result carries the output its endpoint needs: files or URLs for a media
 * endpoint, `data` for the others. A completed result without it is the worker's 80004.
 */
export function hasOutput(endpoint: Endpoint, result: CompletedResult): boolean {
  if (MEDIA_ENDPOINTS.includes(endpoint)) return (result.files?.length ?? 0) + (result.urls?.length ?? 0) > 0;
  return result.data !== undefined;
}
