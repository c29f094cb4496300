import OpenAI from "openai";
import { createCappedFetch } from "../capped-fetch.ts";
import type { ProviderOptions } from "../provider.ts";

export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";
const DEFAULT_TIMEOUT_MS = 10_000;
/** A status or text answer is a small JSON object. */
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
/** Four base64 images or one MP4: the size DOWNLOAD_MAX_BYTES allows an output file by default. */
const DEFAULT_MAX_MEDIA_BYTES = 50 * 1024 * 1024;
/** An Images API call answers only once the images exist, which takes gpt-image-1 up to a minute or two. */
const DEFAULT_MEDIA_TIMEOUT_MS = 180_000;

export interface OpenAIProviderOptions extends ProviderOptions {
  /** Largest answer that carries media (Images API answers, a video's content). Default 50 MiB. */
  maxMediaBytes?: number;
  /** Time limit of a call that carries media (an image generation, a video download). Default 180 s. */
  mediaTimeoutMs?: number;
}

/** Two clients of one account: one for the small JSON calls, one for the calls that carry media. */
export interface OpenAIClients {
  api: OpenAI;
  media: OpenAI;
}

function client(options: OpenAIProviderOptions, maxBytes: number, timeoutMs: number): OpenAI {
  return new OpenAI({
    // null, not undefined: the key comes from the configuration, and the SDK reads none of its
    // own variables (OPENAI_ORG_ID, OPENAI_PROJECT_ID, OPENAI_ADMIN_KEY) behind its back.
    apiKey: options.apiKey ?? null,
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    baseURL: options.baseUrl ?? OPENAI_DEFAULT_BASE_URL,
    // The worker owns retries: a retried submit here could start (and bill) a job twice.
    maxRetries: 0,
    timeout: timeoutMs,
    fetch: createCappedFetch({ maxBytes, timeoutMs }),
  });
}

export function createOpenAIClients(options: OpenAIProviderOptions): OpenAIClients {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return {
    api: client(options, options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, timeoutMs),
    media: client(options, options.maxMediaBytes ?? DEFAULT_MAX_MEDIA_BYTES, Math.max(timeoutMs, options.mediaTimeoutMs ?? DEFAULT_MEDIA_TIMEOUT_MS)),
  };
}
