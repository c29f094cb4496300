import { AnswerTooLargeError } from "@gen/capped-body";
import { Wf } from "@gen/errors";
import { APIConnectionError, APIError, APIUserAbortError } from "openai";
import { PolicyViolation } from "../policy-violation.ts";
import { parseRetryAfter } from "../retry-after.ts";
import { ProviderUnavailableError } from "../provider-unavailable-error.ts";
import { answerCause, causeMessage, type UpstreamCause } from "../upstream-cause.ts";
import { UpstreamRejection } from "../upstream-rejection.ts";

/** `error.code` values OpenAI gives a request its safety system refused. */
const POLICY_CODES = new Set(["content_policy_violation", "moderation_blocked"]);
/** Statuses that say the request itself is wrong: repeating it cannot help. */
const REJECTING_STATUSES = new Set([400, 413, 415, 422]);

export function isPolicyCode(code: unknown): boolean {
  return typeof code === "string" && POLICY_CODES.has(code);
}

/** What OpenAI said, for the operator: status, its error text, its request id. */
function causeOf(error: APIError): UpstreamCause {
  const body = error.error as { message?: unknown } | undefined;
  return answerCause(error.status, causeMessage(body?.message) ?? connectionText(error), error.requestID);
}

/** A connection error's own text, with the cap or timeout that ended it when there was one. */
function connectionText(error: Error): string {
  const inner = error.cause;
  if (inner instanceof AnswerTooLargeError) return `the answer's ${inner.message}`;
  return inner instanceof Error ? `${error.message}: ${inner.message}` : error.message;
}

/** The wait OpenAI asked for: `retry-after-ms` (its own header, in milliseconds) first, then the standard `Retry-After`. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = headers?.get("retry-after-ms")?.trim();
  if (ms !== undefined && /^\d{1,10}(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  return parseRetryAfter(headers?.get("retry-after"), now);
}

/** Rethrows the caller's abort as itself, so an abort is never mistaken for an upstream fault. */
function rethrowAbort(error: unknown, signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason ?? error;
  if (error instanceof APIUserAbortError) throw error;
}

/** No usable answer: transient, whatever the call was. */
function unavailable(error: unknown): ProviderUnavailableError {
  if (error instanceof APIConnectionError) {
    return new ProviderUnavailableError(`OpenAI request failed: ${connectionText(error)}`, { cause: error, upstream: causeOf(error) });
  }
  if (error instanceof APIError) {
    const wait = retryAfterMs(error.headers);
    return new ProviderUnavailableError(`OpenAI answered HTTP ${error.status}`, {
      cause: error,
      upstream: causeOf(error),
      ...(wait === undefined ? {} : { retryAfterMs: wait }),
    });
  }
  return new ProviderUnavailableError(`OpenAI request failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}

/**
 * A failed job-creating call as the worker reads it: a policy verdict on the input (80006, input
 * stage), a request OpenAI refuses for good (80007), or no usable answer (429, 5xx, 401/403 of a
 * misconfigured key, network, timeout, an answer over the cap), which is transient.
 */
export function submitError(error: unknown, signal: AbortSignal | undefined): Error {
  rethrowAbort(error, signal);
  if (error instanceof APIError && !(error instanceof APIConnectionError) && error.status !== undefined) {
    const cause = causeOf(error);
    if (error.status >= 400 && error.status < 500 && isPolicyCode(error.code)) return new PolicyViolation("input", cause.message, cause);
    if (REJECTING_STATUSES.has(error.status)) return new UpstreamRejection(Wf.InputRejected, cause);
  }
  return unavailable(error);
}

/** A failed status read: only "no such job" is an answer; anything else is polled again. */
export function pollError(error: unknown, signal: AbortSignal | undefined): { notFound: UpstreamCause } | Error {
  rethrowAbort(error, signal);
  if (error instanceof APIError && error.status === 404) return { notFound: causeOf(error) };
  return unavailable(error);
}
