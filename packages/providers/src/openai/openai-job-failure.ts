import { Wf } from "@gen/errors";
import type { ProviderResult } from "../provider.ts";
import { causeMessage, type UpstreamCause } from "../upstream-cause.ts";
import { isPolicyCode } from "./openai-error.ts";

type Failed = Extract<ProviderResult, { state: "failed" }>;

/** Codes of a job failed by its safety system once accepted (Responses, Videos). */
const JOB_POLICY_CODES = new Set(["bio_policy", "image_content_policy_violation"]);
/** Codes of a job failed because of what it was given: its prompt or its reference image. */
const JOB_INPUT_CODES = new Set([
  "invalid_prompt",
  "invalid_image",
  "invalid_image_format",
  "invalid_image_url",
  "invalid_image_mode",
  "image_too_large",
  "image_too_small",
  "image_parse_error",
  "image_file_too_large",
  "unsupported_image_media_type",
  "empty_image_file",
  "failed_to_download_image",
  "image_file_not_found",
]);

function cause(code: string | undefined, message: unknown): UpstreamCause {
  const text = causeMessage(message);
  return { message: causeMessage(code && text ? `${code}: ${text}` : (text ?? code)) ?? "failed" };
}

/**
 * A background job's failure as the worker reads it. A policy verdict reported once the job ran
 * is the output stage's (the job was accepted, so its input had passed); a failure naming the
 * input is 80007; anything else is a terminal 80003. The message goes to the operator only.
 */
export function jobFailure(error: { code?: unknown; message?: unknown } | null | undefined): Failed {
  const code = typeof error?.code === "string" ? error.code : undefined;
  const upstream = cause(code, error?.message);
  if (isPolicyCode(code) || (code !== undefined && JOB_POLICY_CODES.has(code))) return { state: "failed", code: Wf.ContentPolicy, stage: "output", upstream };
  if (code !== undefined && JOB_INPUT_CODES.has(code)) return { state: "failed", code: Wf.InputRejected, upstream };
  return { state: "failed", code: Wf.UpstreamFailed, upstream };
}

export function terminalFailure(message: string): Failed {
  return { state: "failed", code: Wf.UpstreamFailed, upstream: { message } };
}
