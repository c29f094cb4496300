import { Wf } from "@gen/errors";
import { readCappedAnswer, type CappedAnswer } from "@gen/capped-body";
import got, { type OptionsInit } from "got";
import { isHttpUrl } from "./http-url.ts";
import { PolicyViolation } from "./policy-violation.ts";
import type { CompletedResult, Provider, ProviderResult } from "./provider.ts";
import { ProviderUnavailableError } from "./provider-unavailable-error.ts";
import { parseRetryAfter } from "./retry-after.ts";
import { tokensOf } from "./token-counts.ts";
import { abortReason, describeFailure, networkCause } from "./upstream-abort.ts";
import { answerCause, type UpstreamCause } from "./upstream-cause.ts";
import { UpstreamRejection } from "./upstream-rejection.ts";
import { UpstreamErrorType, UpstreamJobStatus } from "./upstream-vocabulary.ts";

type StreamOptions = Omit<OptionsInit, "isStream">;

export const DEFAULT_UPSTREAM_TIMEOUT_MS = 10_000;
/** UPSTREAM_MAX_RESPONSE_BYTES's default: a protocol answer is a small JSON object. */
const DEFAULT_UPSTREAM_MAX_RESPONSE_BYTES = 1024 * 1024;
const MAX_MESSAGE_LENGTH = 500;

type Json = Record<string, unknown>;

function asObject(value: unknown): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}

function parseBody(answer: CappedAnswer): Json | undefined {
  try {
    return asObject(JSON.parse(answer.body.toString("utf8")));
  } catch {
    return undefined;
  }
}

/** `error` is either `{ type, message }` or, in the short form, the type itself. */
function errorOf(body: Json | undefined): { type?: string; message?: string } {
  const error = body?.error;
  if (typeof error === "string") return { type: error };
  const object = asObject(error);
  return {
    type: typeof object?.type === "string" ? object.type : undefined,
    message: typeof object?.message === "string" ? object.message.slice(0, MAX_MESSAGE_LENGTH) : undefined,
  };
}

/** What the upstream said, for the operator: its status, error text and request id. */
function causeOf(response: CappedAnswer, message: string | undefined): UpstreamCause {
  const requestId = response.headers["x-request-id"];
  return answerCause(response.statusCode, message, typeof requestId === "string" ? requestId.slice(0, 200) : undefined);
}

/** A 429, or a 5xx: the upstream is there but cannot take the request now; `retryAfterMs` when it said when to come back. */
function unavailable(what: string, response: CappedAnswer, message: string | undefined): ProviderUnavailableError {
  const header = response.headers["retry-after"];
  const retryAfterMs = parseRetryAfter(Array.isArray(header) ? header[0] : header);
  return new ProviderUnavailableError(`${what} answered HTTP ${response.statusCode}`, {
    upstream: causeOf(response, message),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

function succeeded(body: Json): CompletedResult {
  const result: CompletedResult = { state: "completed" };
  const output = asObject(body.output);
  if (Array.isArray(output?.urls)) result.urls = output.urls.filter(isHttpUrl);
  const data = asObject(output?.data);
  if (data) result.data = data;
  const tokens = tokensOf(body.usage);
  if (tokens) result.tokens = tokens;
  return result;
}

function withMessage<T extends object>(result: T, message: string | undefined): T & { message?: string } {
  return message === undefined ? result : { ...result, message };
}

export interface HttpProviderOptions {
  baseUrl: string;
  timeoutMs?: number;
  /** Largest answer body read (UPSTREAM_MAX_RESPONSE_BYTES); a longer one is a failed request. */
  maxResponseBytes?: number;
}

/**
 * A provider for an upstream speaking the submit-then-poll JSON protocol of README.md. Requests
 * are never retried here: the worker owns retries (a 429, a 5xx or no answer is a
 * ProviderUnavailableError, with the Retry-After the upstream sent), and decides whether a submit
 * that may have created a job is worth repeating.
 * Every answer is read through the cap downloads use, so a huge or endless answer costs at most
 * `maxResponseBytes` of memory: at submit it fails the submission, at a poll it is a failed poll.
 */
export function createHttpProvider(options: HttpProviderOptions): Provider {
  const base = options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_UPSTREAM_MAX_RESPONSE_BYTES;
  const client = got.extend({
    timeout: { request: timeoutMs },
    retry: { limit: 0 },
    throwHttpErrors: false,
    followRedirect: false,
  });
  const request = (url: URL, init: StreamOptions): Promise<CappedAnswer> => readCappedAnswer(client.stream(url, init), maxBytes);
  const jobUrl = (upstreamId: string, suffix = "") => new URL(`v1/jobs/${encodeURIComponent(upstreamId)}${suffix}`, base);

  return {
    async submit(job, signal) {
      signal?.throwIfAborted();
      let response: CappedAnswer;
      try {
        response = await request(new URL("v1/jobs", base), {
          method: "POST",
          json: { model: job.upstreamModel ?? job.model, input: job.params, reference: job.taskId },
          signal,
        });
      } catch (error) {
        const reason = abortReason(signal, error);
        if (reason !== undefined) throw reason;
        throw new ProviderUnavailableError(`Upstream submission failed: ${describeFailure(error)}`, { cause: error, upstream: networkCause(error) });
      }
      const body = parseBody(response);
      const { type, message } = errorOf(body);
      const status = response.statusCode;
      if (status >= 200 && status < 300) {
        if (typeof body?.id === "string" && body.id !== "") return { upstreamId: body.id };
        throw new UpstreamRejection(Wf.UpstreamSubmitFailed, causeOf(response, "answered without a job id"));
      }
      if (status === 429 || status >= 500) throw unavailable("Upstream submission", response, message);
      if (status >= 400 && status < 500 && type === UpstreamErrorType.ContentPolicy) throw new PolicyViolation("input", message, causeOf(response, message));
      if (status === 400 || status === 413 || status === 415 || status === 422) throw new UpstreamRejection(Wf.InputRejected, causeOf(response, message));
      // 401, 403, 404, a redirect: the upstream is there and will not take this job, whenever asked.
      throw new UpstreamRejection(Wf.UpstreamSubmitFailed, causeOf(response, message ?? `HTTP ${status}`));
    },

    async poll(upstreamId, signal): Promise<ProviderResult> {
      signal?.throwIfAborted();
      let response: CappedAnswer;
      try {
        response = await request(jobUrl(upstreamId), { signal });
      } catch (error) {
        const reason = abortReason(signal, error);
        if (reason !== undefined) throw reason;
        throw new ProviderUnavailableError(`Upstream poll failed: ${describeFailure(error)}`, { cause: error, upstream: networkCause(error) });
      }
      if (response.statusCode === 404) {
        const message = "Upstream does not know the job";
        return { state: "failed", code: Wf.UpstreamFailed, message, upstream: causeOf(response, message) };
      }
      const body = parseBody(response);
      if (response.statusCode !== 200 || !body) throw unavailable("Upstream poll", response, errorOf(body).message);
      const { type, message } = errorOf(body);
      const failed = <T extends object>(result: T) => ({ ...withMessage(result, message), upstream: causeOf(response, message) });
      switch (body.status) {
        case UpstreamJobStatus.Queued:
        case UpstreamJobStatus.Running:
          return { state: "running" };
        case UpstreamJobStatus.Succeeded:
          return succeeded(body);
        case UpstreamJobStatus.Canceled:
          return { state: "failed", code: Wf.UpstreamFailed, message: "Upstream job was canceled", upstream: causeOf(response, "canceled upstream") };
        case UpstreamJobStatus.Failed:
          if (type === UpstreamErrorType.ContentPolicy) return failed({ state: "failed", code: Wf.ContentPolicy, stage: "output" });
          if (type === UpstreamErrorType.InvalidInput) return failed({ state: "failed", code: Wf.InputRejected });
          return failed({ state: "failed", code: Wf.UpstreamFailed });
        default:
          throw new ProviderUnavailableError(`Upstream poll answered an unknown status ${JSON.stringify(body.status)}`, {
            upstream: causeOf(response, undefined),
          });
      }
    },

    async cancel(upstreamId) {
      try {
        await request(jobUrl(upstreamId, "/cancel"), { method: "POST", json: {} });
      } catch {
        // Best effort: the worker has already decided the task's fate.
      }
    },
  };
}
