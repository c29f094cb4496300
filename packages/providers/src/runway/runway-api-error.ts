import { Wf } from "@gen/errors";
import { APIError } from "@runwayml/sdk";
import { PolicyViolation } from "../policy-violation.ts";
import type { ProviderResult } from "../provider.ts";
import { ProviderUnavailableError } from "../provider-unavailable-error.ts";
import { parseRetryAfter } from "../retry-after.ts";
import { answerCause, type UpstreamCause } from "../upstream-cause.ts";
import { describeFailure, networkCause } from "../upstream-abort.ts";
import { UpstreamRejection } from "../upstream-rejection.ts";

/** An answer with a status: the SDK's APIError carrying one (connection errors carry none). */
function answered(error: unknown): (APIError & { status: number; headers: Headers }) | undefined {
  return error instanceof APIError && typeof error.status === "number" && error.headers !== undefined
    ? (error as APIError & { status: number; headers: Headers })
    : undefined;
}

/** Runway answers errors as `{ "error": "...", "issues"?: [...] }`. */
function causeOf(error: APIError & { status: number; headers: Headers }): UpstreamCause {
  const body = error.error as { error?: unknown; message?: unknown } | undefined;
  const text = typeof body?.error === "string" ? body.error : typeof body?.message === "string" ? body.message : error.message;
  return answerCause(error.status, text, error.headers.get("x-request-id"));
}

/** Statuses that say nothing about the job: the provider could not look at it now. */
function isTransient(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** The operator's to fix (the secret, the plan, the model): refused whenever asked. */
function isOperatorFault(status: number): boolean {
  return status === 401 || status === 403 || status === 404;
}

function unavailable(what: string, error: APIError & { status: number; headers: Headers }): ProviderUnavailableError {
  const wait = parseRetryAfter(error.headers.get("retry-after"));
  return new ProviderUnavailableError(`Runway ${what} answered HTTP ${error.status}`, {
    upstream: causeOf(error),
    ...(wait === undefined ? {} : { retryAfterMs: wait }),
  });
}

const POLICY_WORDS = /content moderation|safety|policy/i;

export function submitError(error: unknown): Error {
  const answer = answered(error);
  if (!answer)
    return new ProviderUnavailableError(`Runway submission failed: ${describeFailure(causeOrSelf(error))}`, { cause: error, upstream: networkCause(error) });
  if (isTransient(answer.status)) return unavailable("submission", answer);
  const upstream = causeOf(answer);
  if (isOperatorFault(answer.status)) return new UpstreamRejection(Wf.UpstreamSubmitFailed, upstream);
  if (upstream.message !== undefined && POLICY_WORDS.test(upstream.message)) return new PolicyViolation("input", undefined, upstream);
  return new UpstreamRejection(Wf.InputRejected, upstream);
}

export function pollError(error: unknown): ProviderResult {
  const answer = answered(error);
  if (!answer)
    throw new ProviderUnavailableError(`Runway poll failed: ${describeFailure(causeOrSelf(error))}`, { cause: error, upstream: networkCause(error) });
  // A job that exists outlives a secret being rotated: only a 404 (the task is gone) ends it.
  if (isTransient(answer.status) || answer.status === 401 || answer.status === 403) throw unavailable("poll", answer);
  return { state: "failed", code: Wf.UpstreamFailed, message: "Upstream does not know the task", upstream: causeOf(answer) };
}

/** The SDK wraps what our fetch threw (a cap, a timeout) in a connection error; its cause says which. */
function causeOrSelf(error: unknown): unknown {
  return error instanceof Error && error.cause instanceof Error ? error.cause : error;
}
