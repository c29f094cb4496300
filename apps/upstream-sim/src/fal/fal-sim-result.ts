import type { CompletedResult } from "@gen/providers";
import { FAL_CONTENT_POLICY_TYPE } from "@gen/providers";
import type { FalSimJob } from "./fal-sim-job.ts";

/** The answer of `GET {app}/requests/{id}` for a finished job: its HTTP status and body. */
export interface FalSimAnswer {
  status: number;
  body: Record<string, unknown>;
}

const POLICY_DETAIL = (loc: string) => ({
  detail: [
    {
      loc: ["body", loc],
      msg: "The content was flagged by a content checker.",
      type: FAL_CONTENT_POLICY_TYPE,
      url: "https://docs.fal.ai/errors#content_policy_violation",
    },
  ],
});

export const falPolicyDetail = POLICY_DETAIL;

export const falValidationDetail = (loc: string, msg: string) => ({ detail: [{ loc: ["body", loc], msg, type: "value_error" }] });

/** The result of a finished job in the shape of its kind of model: `images`, `video` or `audio`. */
export function falResultAnswer(job: FalSimJob, result: () => CompletedResult, fileUrl: (index: number, extension: string) => string): FalSimAnswer {
  if (job.canceled) return { status: 400, body: { detail: "Request was cancelled" } };
  if (job.directives.fail) return { status: 500, body: { detail: "Simulated generation failure" } };
  const policy = job.directives.policyOutput;
  if (policy && job.endpoint !== "images") return { status: 422, body: POLICY_DETAIL("prompt") };
  if (job.directives.noUrls) return { status: 200, body: job.endpoint === "images" ? { images: [], has_nsfw_concepts: [] } : {} };
  const files = result().files ?? [];
  const media = files.map((file, index) => ({
    url: job.directives.outputUrl ?? fileUrl(index, file.extension),
    content_type: file.contentType,
    file_name: `${index}.${file.extension}`,
    file_size: file.data.length,
  }));
  switch (job.endpoint) {
    case "images":
      return {
        status: 200,
        body: { images: media, has_nsfw_concepts: media.map(() => policy), prompt: job.input.prompt ?? "", seed: 42, timings: { inference: 0.1 } },
      };
    case "videos":
      return { status: 200, body: { video: media[0] ?? null } };
    case "audio":
      return { status: 200, body: { audio: media[0] ?? null } };
    default:
      return { status: 200, body: { output: result().data ?? null } };
  }
}
