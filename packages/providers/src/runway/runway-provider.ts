import { Wf } from "@gen/errors";
import RunwayML from "@runwayml/sdk";
import { createCappedFetch } from "../capped-fetch.ts";
import type { Provider, ProviderJob, ProviderOptions, ProviderResult } from "../provider.ts";
import { ProviderUnavailableError } from "../provider-unavailable-error.ts";
import { isHttpUrl } from "../http-url.ts";
import { abortReason } from "../upstream-abort.ts";
import { UpstreamRejection } from "../upstream-rejection.ts";
import { pollError, submitError } from "./runway-api-error.ts";
import { runwayFailure } from "./runway-failure.ts";
import { runwayInput } from "./runway-input.ts";

export const RUNWAY_DEFAULT_BASE_URL = "https://api.dev.runwayml.com";
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

/** Runway models that only animate an image: a job without `image_url` cannot run on them. */
const IMAGE_ONLY_MODELS = new Set(["gen4_turbo", "gen3a_turbo"]);

type Body = Record<string, unknown>;

/**
 * Runway tasks through @runwayml/sdk (docs/providers.md#runway): images by text_to_image, videos
 * by image_to_video when the job has a reference image and text_to_video otherwise, polled by
 * GET /v1/tasks/{id}. Runway's API has no webhook, so jobs are never created with a callback and
 * the worker polls. The SDK's retries are off (the worker owns them) and every answer is read
 * through the capped fetch.
 */
export function createRunwayProvider(options: ProviderOptions): Provider {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const client = new RunwayML({
    // Passed even when empty, so the SDK never reads credentials or an address from the environment itself.
    apiKey: options.apiKey ?? "",
    baseURL: options.baseUrl ?? RUNWAY_DEFAULT_BASE_URL,
    maxRetries: 0,
    timeout: timeoutMs,
    fetch: createCappedFetch({ maxBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, timeoutMs }),
    logLevel: "off",
  });

  function create(job: ProviderJob, signal: AbortSignal | undefined): Promise<{ id: string }> {
    const model = job.upstreamModel ?? job.model;
    const body: Body = { ...runwayInput(job), model };
    const request = signal ? { signal } : {};
    if (job.endpoint === "images") return client.textToImage.create(body as never, request);
    if (job.endpoint !== "videos") throw new UpstreamRejection(Wf.UpstreamFailed, { message: `Runway has no ${job.endpoint} generation` });
    if (body.promptImage !== undefined) return client.imageToVideo.create(body as never, request);
    if (IMAGE_ONLY_MODELS.has(model)) throw new UpstreamRejection(Wf.InputRejected, { message: `${model} needs a reference image (image_url)` });
    return client.textToVideo.create(body as never, request);
  }

  return {
    async submit(job, signal) {
      signal?.throwIfAborted();
      let created: { id: string };
      try {
        created = await create(job, signal);
      } catch (error) {
        if (error instanceof UpstreamRejection) throw error;
        const reason = abortReason(signal, error);
        if (reason !== undefined) throw reason;
        throw submitError(error);
      }
      if (typeof created?.id !== "string" || created.id === "") throw new ProviderUnavailableError("Runway answered a task without an id");
      return { upstreamId: created.id, callback: false };
    },

    async poll(upstreamId, signal): Promise<ProviderResult> {
      signal?.throwIfAborted();
      let task: Body;
      try {
        task = (await client.tasks.retrieve(upstreamId, signal ? { signal } : {})) as unknown as Body;
      } catch (error) {
        const reason = abortReason(signal, error);
        if (reason !== undefined) throw reason;
        return pollError(error);
      }
      switch (task?.status) {
        case "PENDING":
        case "THROTTLED":
        case "RUNNING":
          return { state: "running" };
        case "SUCCEEDED":
          return { state: "completed", urls: Array.isArray(task.output) ? task.output.filter(isHttpUrl) : [] };
        case "FAILED":
          return runwayFailure(upstreamId, task.failureCode, task.failure);
        case "CANCELLED":
          return {
            state: "failed",
            code: Wf.UpstreamFailed,
            message: "Upstream task was cancelled",
            upstream: { requestId: upstreamId, message: "task cancelled" },
          };
        default:
          throw new ProviderUnavailableError(`Runway answered an unknown task status ${JSON.stringify(task?.status)}`);
      }
    },

    async cancel(upstreamId) {
      try {
        await client.tasks.delete(upstreamId);
      } catch {
        // Best effort: the worker has already decided the task's fate.
      }
    },
  };
}
