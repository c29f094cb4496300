import { Wf } from "@gen/errors";
import { PolicyViolation } from "../policy-violation.ts";
import type { ProviderResult } from "../provider.ts";
import { ProviderUnavailableError } from "../provider-unavailable-error.ts";
import { parseRetryAfter } from "../retry-after.ts";
import { answerCause, type UpstreamCause } from "../upstream-cause.ts";
import { describeFailure, networkCause } from "../upstream-abort.ts";
import { UpstreamRejection } from "../upstream-rejection.ts";
import { isPolicyText } from "./replicate-failure.ts";

/** What the replicate package throws for an answer that is not 2xx (its ApiError is a type only). */
interface ReplicateApiError extends Error {
  response: Response;
}

function isReplicateApiError(error: unknown): error is ReplicateApiError {
  return error instanceof Error && error.name === "ApiError" && (error as Partial<ReplicateApiError>).response instanceof Response;
}

/** Replicate answers errors as problem JSON: `{ title, detail, status }`. */
function problemText(body: string | undefined): string | undefined {
  if (body === undefined) return undefined;
  try {
    const problem = JSON.parse(body) as { detail?: unknown; title?: unknown };
    if (typeof problem.detail === "string") return problem.detail;
    if (typeof problem.title === "string") return problem.title;
  } catch {
    // Not JSON: the text itself.
  }
  return body;
}

function causeOf(response: Response, body: string | undefined): UpstreamCause {
  return answerCause(response.status, problemText(body), response.headers.get("x-request-id"));
}

/** Statuses that say nothing about the job: the provider could not look at it now. */
function isTransient(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** The operator's to fix (token, billing, permissions, model id): refused whenever asked. */
function isOperatorFault(status: number): boolean {
  return status === 401 || status === 402 || status === 403 || status === 404;
}

function unavailable(what: string, response: Response, upstream: UpstreamCause): ProviderUnavailableError {
  const wait = parseRetryAfter(response.headers.get("retry-after"));
  return new ProviderUnavailableError(`Replicate ${what} answered HTTP ${response.status}`, {
    upstream,
    ...(wait === undefined ? {} : { retryAfterMs: wait }),
  });
}

/** The error a failed prediction create ends in. */
export async function submitError(error: unknown, bodyOf: (response: Response) => Promise<string | undefined>): Promise<Error> {
  if (!isReplicateApiError(error))
    return new ProviderUnavailableError(`Replicate submission failed: ${describeFailure(error)}`, { cause: error, upstream: networkCause(error) });
  const { response } = error;
  const upstream = causeOf(response, await bodyOf(response));
  if (isTransient(response.status)) return unavailable("submission", response, upstream);
  if (isOperatorFault(response.status)) return new UpstreamRejection(Wf.UpstreamSubmitFailed, upstream);
  if (isPolicyText(upstream.message)) return new PolicyViolation("input", undefined, upstream);
  return new UpstreamRejection(Wf.InputRejected, upstream);
}

/** A failed prediction read: thrown when transient, otherwise the job's end. */
export async function pollError(error: unknown, bodyOf: (response: Response) => Promise<string | undefined>): Promise<ProviderResult> {
  if (!isReplicateApiError(error))
    throw new ProviderUnavailableError(`Replicate poll failed: ${describeFailure(error)}`, { cause: error, upstream: networkCause(error) });
  const { response } = error;
  const upstream = causeOf(response, await bodyOf(response));
  // A job that exists outlives a credential being rotated: only a 404 (the job is gone) ends it.
  if (isTransient(response.status) || (response.status !== 404 && isOperatorFault(response.status))) throw unavailable("poll", response, upstream);
  return { state: "failed", code: Wf.UpstreamFailed, message: "Upstream does not know the prediction", upstream };
}
