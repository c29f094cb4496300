import { MEDIA_ENDPOINTS, type Endpoint } from "@gen/domain";
import Replicate, { type Prediction } from "replicate";
import { createCappedFetch } from "../capped-fetch.ts";
import type { Provider, ProviderOptions, ProviderResult } from "../provider.ts";
import { ProviderUnavailableError } from "../provider-unavailable-error.ts";
import { abortReason } from "../upstream-abort.ts";
import { pollError, submitError } from "./replicate-api-error.ts";
import { replicateFailure } from "./replicate-failure.ts";
import { replicateInput, replicateTarget } from "./replicate-input.ts";
import { replicateOutput } from "./replicate-output.ts";
import { createSingleExchangeFetch } from "./single-exchange-fetch.ts";

export const REPLICATE_DEFAULT_BASE_URL = "https://api.replicate.com/v1";
const DEFAULT_TIMEOUT_MS = 10_000;
/** A prediction object is small JSON; a language model's output a few hundred KB at most. */
const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * The upstream id of a job whose output is data carries its endpoint after a colon (Replicate's
 * prediction ids never hold one): a poll has only the id, and a language model's text becomes
 * `{text, word_count}` for an essay but `{text}` for humanize.
 */
function upstreamIdOf(predictionId: string, endpoint: Endpoint): string {
  return MEDIA_ENDPOINTS.includes(endpoint) ? predictionId : `${predictionId}:${endpoint}`;
}

function parseUpstreamId(upstreamId: string): { predictionId: string; textEndpoint?: Endpoint } {
  const colon = upstreamId.indexOf(":");
  if (colon < 0) return { predictionId: upstreamId };
  return { predictionId: upstreamId.slice(0, colon), textEndpoint: upstreamId.slice(colon + 1) as Endpoint };
}

/**
 * Replicate predictions through the replicate package (docs/providers.md#replicate): create with
 * the mapped input (and the task's callback as the `completed` webhook), poll by id, cancel. Every
 * answer is read through the capped fetch, and each SDK request is one exchange: the worker owns
 * retries and waits.
 */
export function createReplicateProvider(options: ProviderOptions): Provider {
  const capped = createCappedFetch({
    maxBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const { fetch, bodyOf } = createSingleExchangeFetch(capped);
  const client = new Replicate({
    auth: options.apiKey,
    baseUrl: options.baseUrl ?? REPLICATE_DEFAULT_BASE_URL,
    fetch,
    // Outputs are URLs for the worker to download with its own limits, never streams opened here.
    useFileOutput: false,
  });

  return {
    async submit(job, signal) {
      signal?.throwIfAborted();
      const callback = job.callbackUrl !== undefined;
      let prediction: Prediction;
      try {
        prediction = await client.predictions.create({
          ...replicateTarget(job.upstreamModel ?? job.model),
          input: replicateInput(job),
          ...(callback ? { webhook: job.callbackUrl, webhook_events_filter: ["completed"] } : {}),
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        const reason = abortReason(signal, error);
        if (reason !== undefined) throw reason;
        throw await submitError(error, bodyOf);
      }
      if (typeof prediction?.id !== "string" || prediction.id === "" || prediction.id.includes(":"))
        throw new ProviderUnavailableError("Replicate answered a prediction without a usable id");
      return { upstreamId: upstreamIdOf(prediction.id, job.endpoint), callback };
    },

    async poll(upstreamId, signal): Promise<ProviderResult> {
      signal?.throwIfAborted();
      const { predictionId, textEndpoint } = parseUpstreamId(upstreamId);
      let prediction: Prediction;
      try {
        prediction = await client.predictions.get(predictionId, signal ? { signal } : {});
      } catch (error) {
        const reason = abortReason(signal, error);
        if (reason !== undefined) throw reason;
        return pollError(error, bodyOf);
      }
      switch (prediction?.status) {
        case "starting":
        case "processing":
          return { state: "running" };
        case "succeeded":
          return replicateOutput(textEndpoint, prediction.output, prediction.metrics);
        case "failed":
        case "canceled":
        case "aborted":
          return replicateFailure(prediction.status, prediction.error, predictionId);
        default:
          throw new ProviderUnavailableError(`Replicate answered an unknown prediction status ${JSON.stringify(prediction?.status)}`);
      }
    },

    async cancel(upstreamId) {
      try {
        await client.predictions.cancel(parseUpstreamId(upstreamId).predictionId);
      } catch {
        // Best effort: the worker has already decided the task's fate.
      }
    },
  };
}
