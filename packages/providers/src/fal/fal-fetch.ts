import { createCappedFetch } from "../capped-fetch.ts";
import { describeFailure } from "../upstream-abort.ts";
import { ProviderUnavailableError } from "../provider-unavailable-error.ts";
import { answerCause, causeMessage, type UpstreamCause } from "../upstream-cause.ts";
import { parseRetryAfter } from "../retry-after.ts";
import { FAL_REQUEST_ID_HEADER } from "./fal-vocabulary.ts";

export interface FalFetchOptions {
  maxBytes: number;
  timeoutMs: number;
}

/** The text of a fal error answer: `detail` (a string, or the first entry's `msg`) or `message`. */
export function falErrorText(body: unknown): string | undefined {
  if (body === null || typeof body !== "object") return causeMessage(body);
  const { detail, message } = body as { detail?: unknown; message?: unknown };
  if (typeof detail === "string") return causeMessage(detail);
  if (Array.isArray(detail)) {
    const first: unknown = detail[0];
    if (first !== null && typeof first === "object" && typeof (first as { msg?: unknown }).msg === "string")
      return causeMessage((first as { msg: string }).msg);
  }
  return causeMessage(message);
}

async function causeOf(response: Response): Promise<UpstreamCause> {
  const text = await response.text().catch(() => "");
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the text itself is the message.
  }
  return answerCause(response.status, falErrorText(body), response.headers.get(FAL_REQUEST_ID_HEADER));
}

/** A network error's code (ECONNREFUSED, ...), which undici keeps on the error's cause. */
function networkCode(error: unknown): string | undefined {
  for (
    let current = error, depth = 0;
    current !== null && typeof current === "object" && depth < 4;
    current = (current as { cause?: unknown }).cause, depth++
  ) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
  }
  if (error instanceof DOMException && error.name === "TimeoutError") return "ETIMEDOUT";
  return undefined;
}

/**
 * The fetch the fal client is given. Answers are read through the capped fetch (size and time).
 * The client's queue calls retry 429, 5xx and network errors on their own, with waits of seconds,
 * and their retry settings cannot be lowered from outside; the worker owns retries (and honours
 * Retry-After), so those answers are turned here into ProviderUnavailableError, which the client
 * does not retry: it carries no `cause`, since the client retries any error whose cause chain
 * looks like a network failure.
 */
export function createFalFetch(options: FalFetchOptions): typeof fetch {
  const capped = createCappedFetch({ maxBytes: options.maxBytes, timeoutMs: options.timeoutMs });
  return async (input, init) => {
    let response: Response;
    try {
      response = await capped(input, init);
    } catch (error) {
      // The caller's own abort is not an upstream fault.
      if (init?.signal?.aborted) throw init.signal.reason ?? error;
      const code = networkCode(error);
      const message = describeFailure(error);
      throw new ProviderUnavailableError(`fal request failed: ${message}`, {
        upstream: { message: causeMessage(message) ?? "request failed", ...(code ? { code } : {}) },
      });
    }
    if (response.status === 429 || response.status >= 500) {
      const upstream = await causeOf(response);
      const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
      throw new ProviderUnavailableError(`fal answered HTTP ${response.status}`, { upstream, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
    }
    return response;
  };
}
