import { Wf } from "@gen/errors";
import type { ProviderResult } from "../provider.ts";
import { causeMessage, type UpstreamCause } from "../upstream-cause.ts";

type Failed = Extract<ProviderResult, { state: "failed" }>;

/**
 * A FAILED task by its `failureCode` (Runway's task-failure reference): `SAFETY.INPUT.*` and
 * `INPUT_PREPROCESSING.SAFETY.*` are a verdict before generation (80006, stage input, refunded),
 * `SAFETY.OUTPUT.*` one on the output (80006, stage output); `INPUT_PREPROCESSING.*` and
 * `ASSET.INVALID` an input it could not use (80007); anything else, `INTERNAL.*` included, 80003.
 */
export function runwayFailure(taskId: string, failureCode: unknown, failure: unknown): Failed {
  const code = typeof failureCode === "string" ? failureCode : "";
  const upstream: UpstreamCause = { requestId: taskId };
  const message = causeMessage([code, typeof failure === "string" ? failure : ""].filter(Boolean).join(": "));
  if (message !== undefined) upstream.message = message;
  if (code.startsWith("SAFETY.OUTPUT")) return { state: "failed", code: Wf.ContentPolicy, stage: "output", upstream };
  if (code.startsWith("SAFETY.") || code.startsWith("INPUT_PREPROCESSING.SAFETY")) return { state: "failed", code: Wf.ContentPolicy, stage: "input", upstream };
  if (code.startsWith("INPUT_PREPROCESSING") || code.startsWith("ASSET.")) return { state: "failed", code: Wf.InputRejected, upstream };
  return { state: "failed", code: Wf.UpstreamFailed, upstream };
}
