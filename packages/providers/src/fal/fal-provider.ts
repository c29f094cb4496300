import { createFalClient, type QueueStatus } from "@fal-ai/client";
import { Wf } from "@gen/errors";
import { PolicyViolation } from "../policy-violation.ts";
import type { Provider, ProviderOptions, ProviderResult } from "../provider.ts";
import { ProviderUnavailableError } from "../provider-unavailable-error.ts";
import { abortReason } from "../upstream-abort.ts";
import { causeMessage, type UpstreamCause } from "../upstream-cause.ts";
import { UpstreamRejection } from "../upstream-rejection.ts";
import { causeOfApiError, isApiError, isContentPolicy, isInputRejection } from "./fal-answer-error.ts";
import { createFalFetch } from "./fal-fetch.ts";
import { falInput } from "./fal-input.ts";
import { falOutput } from "./fal-output.ts";
import { falUpstreamId, parseFalUpstreamId } from "./fal-upstream-id.ts";
import { FAL_CONTENT_POLICY_TYPE, FAL_QUEUE_BASE, FalQueueStatus } from "./fal-vocabulary.ts";

const DEFAULT_TIMEOUT_MS = 10_000;
/** A queue answer is a small JSON object whose media are URLs. */
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

/** An answer the client could not make sense of (a body that is not JSON, say): no usable answer. */
function unusable(error: unknown): ProviderUnavailableError {
  if (error instanceof ProviderUnavailableError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ProviderUnavailableError(`fal answer unusable: ${message}`, { upstream: { message: causeMessage(message) ?? "unusable answer" } });
}

function failed(code: typeof Wf.UpstreamFailed | typeof Wf.InputRejected, message: string, upstream?: UpstreamCause): ProviderResult {
  return { state: "failed", code, message, ...(upstream ? { upstream } : {}) };
}

/** fal may name the failure of a completed request in its status (`error`, `error_type`). */
function statusFailure(status: QueueStatus): ProviderResult | undefined {
  const { error, error_type: type } = status as { error?: unknown; error_type?: unknown };
  if (typeof error !== "string" || error === "") return undefined;
  const upstream: UpstreamCause = { message: causeMessage(error) ?? error, requestId: status.request_id };
  if (type === FAL_CONTENT_POLICY_TYPE) return { state: "failed", code: Wf.ContentPolicy, stage: "output", message: upstream.message, upstream };
  return failed(Wf.UpstreamFailed, "fal request failed", upstream);
}

/**
 * The fal adapter (catalog `provider: "fal"`, `upstreamModel` a fal model id such as
 * `fal-ai/flux/schnell`) on fal's own client, through its queue: submit, then status and result.
 * `baseUrl` replaces the queue base https://queue.fal.run through the client's request middleware.
 * Every request goes through the capped fetch, and the client's own retries never run (see
 * createFalFetch): the worker owns retries.
 */
export function createFalProvider(options: ProviderOptions): Provider {
  const base = options.baseUrl?.replace(/\/+$/, "");
  const client = createFalClient({
    credentials: options.apiKey ?? "",
    fetch: createFalFetch({ maxBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS }),
    requestMiddleware: async (request) =>
      base !== undefined && request.url.startsWith(`${FAL_QUEUE_BASE}/`) ? { ...request, url: `${base}${request.url.slice(FAL_QUEUE_BASE.length)}` } : request,
  });

  async function result(endpointId: string, requestId: string, signal: AbortSignal | undefined): Promise<ProviderResult> {
    try {
      const answer = await client.queue.result(endpointId, { requestId, ...(signal ? { abortSignal: signal } : {}) });
      return falOutput(answer.data, answer.requestId || requestId);
    } catch (error) {
      const reason = abortReason(signal, error);
      if (reason !== undefined) throw reason;
      if (isApiError(error)) {
        const upstream = causeOfApiError(error);
        if (isContentPolicy(error))
          return { state: "failed", code: Wf.ContentPolicy, stage: "output", ...(upstream.message ? { message: upstream.message } : {}), upstream };
        // 422 is the model's validation of the input; a 400 here is a canceled or otherwise dead request.
        if (error.status === 422) return failed(Wf.InputRejected, "fal rejected the input", upstream);
        return failed(Wf.UpstreamFailed, "fal request failed", upstream);
      }
      // The request is COMPLETED: a 500 for its result is the request's own failure, not an outage.
      if (error instanceof ProviderUnavailableError && error.upstream?.status === 500) return failed(Wf.UpstreamFailed, "fal request failed", error.upstream);
      throw unusable(error);
    }
  }

  return {
    async submit(job, signal) {
      signal?.throwIfAborted();
      const endpointId = job.upstreamModel ?? job.model;
      let queued: { request_id?: unknown };
      try {
        queued = await client.queue.submit(endpointId, {
          input: falInput(job),
          ...(job.callbackUrl ? { webhookUrl: job.callbackUrl } : {}),
          ...(signal ? { abortSignal: signal } : {}),
        });
      } catch (error) {
        const reason = abortReason(signal, error);
        if (reason !== undefined) throw reason;
        if (!isApiError(error)) throw unusable(error);
        const upstream = causeOfApiError(error);
        if (isContentPolicy(error)) throw new PolicyViolation("input", upstream.message, upstream);
        if (isInputRejection(error)) throw new UpstreamRejection(Wf.InputRejected, upstream);
        // 401, 403, 404 (unknown model) and the like: fal answered and will answer the same again.
        throw new UpstreamRejection(Wf.UpstreamSubmitFailed, upstream);
      }
      if (typeof queued.request_id !== "string" || queued.request_id === "") throw unusable(new Error("submit answered without a request_id"));
      return { upstreamId: falUpstreamId({ endpointId, requestId: queued.request_id }), ...(job.callbackUrl ? { callback: true } : {}) };
    },

    async poll(upstreamId, signal) {
      signal?.throwIfAborted();
      const ref = parseFalUpstreamId(upstreamId);
      if (!ref) return failed(Wf.UpstreamFailed, "Not a fal request id");
      let status: QueueStatus;
      try {
        status = await client.queue.status(ref.endpointId, { requestId: ref.requestId, logs: false, ...(signal ? { abortSignal: signal } : {}) });
      } catch (error) {
        const reason = abortReason(signal, error);
        if (reason !== undefined) throw reason;
        if (!isApiError(error)) throw unusable(error);
        return failed(Wf.UpstreamFailed, error.status === 404 ? "fal does not know the request" : "fal refused the status request", causeOfApiError(error));
      }
      switch (status.status) {
        case FalQueueStatus.InQueue:
        case FalQueueStatus.InProgress:
          return { state: "running" };
        case FalQueueStatus.Completed:
          return statusFailure(status) ?? (await result(ref.endpointId, ref.requestId, signal));
        default:
          throw unusable(new Error(`unknown status ${JSON.stringify((status as { status?: unknown }).status)}`));
      }
    },

    async cancel(upstreamId) {
      const ref = parseFalUpstreamId(upstreamId);
      if (!ref) return;
      try {
        await client.queue.cancel(ref.endpointId, { requestId: ref.requestId });
      } catch {
        // Best effort: the worker has already decided the task's fate, and a finished request keeps its outcome.
      }
    },
  };
}
