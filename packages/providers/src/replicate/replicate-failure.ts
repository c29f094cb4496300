import { Wf } from "@gen/errors";
import type { ProviderResult } from "../provider.ts";
import { causeMessage, type UpstreamCause } from "../upstream-cause.ts";

type Failed = Extract<ProviderResult, { state: "failed" }>;

// Replicate reports a failed prediction with free text only (`error`), so the kind of failure is
// read from its words: the safety checkers of its image and video models say "NSFW" or "flagged
// as sensitive", Cog's input validation says "validation" or "invalid".
const POLICY_WORDS = /nsfw|content polic|safety|sensitive|flagged|moderation/i;
const INPUT_WORDS = /invalid|validation|not a valid|is required|must be/i;

/** What a failed or canceled prediction means for the task. */
export function replicateFailure(status: "failed" | "canceled" | "aborted", error: unknown, predictionId: string): Failed {
  const message = causeMessage(typeof error === "string" ? error : error === null || error === undefined ? undefined : JSON.stringify(error));
  const upstream: UpstreamCause = { requestId: predictionId, message: message ?? `prediction ${status}` };
  if (status !== "failed") return { state: "failed", code: Wf.UpstreamFailed, message: `Upstream prediction ${status}`, upstream };
  if (message && POLICY_WORDS.test(message)) return { state: "failed", code: Wf.ContentPolicy, stage: "output", upstream };
  if (message && INPUT_WORDS.test(message)) return { state: "failed", code: Wf.InputRejected, upstream };
  return { state: "failed", code: Wf.UpstreamFailed, upstream };
}

/** Whether the text of a refused request (not a failed prediction) is a content-policy verdict. */
export function isPolicyText(text: string | undefined): boolean {
  return text !== undefined && POLICY_WORDS.test(text);
}
