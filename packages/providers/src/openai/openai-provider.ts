import { Wf } from "@gen/errors";
import type { Provider, ProviderJob, ProviderResult, Submitted } from "../provider.ts";
import { UpstreamRejection } from "../upstream-rejection.ts";
import { createOpenAIClients, type OpenAIProviderOptions } from "./openai-clients.ts";
import { submitImages } from "./openai-images.ts";
import { submitModeration } from "./openai-moderations.ts";
import { cancelResponse, pollResponse, submitResponse, type TextEndpoint } from "./openai-responses.ts";
import { cancelVideo, pollVideo, submitVideo } from "./openai-videos.ts";

/** Ids OpenAI gives the jobs that outlive their request; any other id is a synchronous answer's. */
const RESPONSE_ID = "resp_";
const VIDEO_ID = "video_";

function isTextJob(job: ProviderJob): job is ProviderJob & { endpoint: TextEndpoint } {
  return job.endpoint === "essay" || job.endpoint === "humanize" || job.endpoint === "detect";
}

/**
 * OpenAI behind the provider contract, on the official SDK: Images and Moderations answer in
 * the submit itself (`Submitted.result`); essay, humanize and detect run as background Responses
 * and videos as Videos jobs, both polled. OpenAI's webhooks are set per project, not per
 * request, so no job is created with a callback: `callbackUrl` is not used.
 */
export function createOpenAIProvider(options: OpenAIProviderOptions): Provider {
  const clients = createOpenAIClients(options);

  return {
    async submit(job, signal): Promise<Submitted> {
      signal?.throwIfAborted();
      const model = job.upstreamModel ?? job.model;
      if (job.endpoint === "images") return submitImages(clients.media, job, model, signal);
      if (job.endpoint === "moderations") return submitModeration(clients.api, job, model, signal);
      if (job.endpoint === "videos") return submitVideo(clients.api, job, model, signal);
      if (isTextJob(job)) return submitResponse(clients.api, job, model, signal);
      throw new UpstreamRejection(Wf.InputRejected, { message: `OpenAI has no mapping for the ${job.endpoint} endpoint` });
    },

    async poll(upstreamId, signal): Promise<ProviderResult> {
      signal?.throwIfAborted();
      if (upstreamId.startsWith(RESPONSE_ID)) return pollResponse(clients.api, upstreamId, signal);
      if (upstreamId.startsWith(VIDEO_ID)) return pollVideo(clients, upstreamId, signal);
      // An Images or Moderations answer came with its submit, and only the submit can be answered:
      // a worker that stopped before storing it cannot ask for it again.
      return {
        state: "failed",
        code: Wf.UpstreamFailed,
        upstream: { requestId: upstreamId, message: "the synchronous answer was lost before it was stored; OpenAI cannot give it again" },
      };
    },

    async cancel(upstreamId) {
      try {
        if (upstreamId.startsWith(RESPONSE_ID)) await cancelResponse(clients.api, upstreamId);
        else if (upstreamId.startsWith(VIDEO_ID)) await cancelVideo(clients.api, upstreamId);
      } catch {
        // Best effort: the worker has already decided the task's fate.
      }
    },
  };
}
