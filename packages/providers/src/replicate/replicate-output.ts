import type { Endpoint } from "@gen/domain";
import { isHttpUrl } from "../http-url.ts";
import type { CompletedResult } from "../provider.ts";
import { tokensOf } from "../token-counts.ts";

/**
 * A succeeded prediction's `output` as our result. A media model answers a URL or an array of
 * URLs (files to download); a language model an array of text pieces (joined), or a string; any
 * other model an object, taken as the data as it is. `textEndpoint` is the endpoint of a job whose
 * output is data (absent for media). Language models report token counts in `metrics`, which
 * feed token billing.
 */
export function replicateOutput(textEndpoint: Endpoint | undefined, output: unknown, metrics: unknown): CompletedResult {
  const result: CompletedResult = { state: "completed" };
  if (textEndpoint === undefined) {
    const candidates = Array.isArray(output) ? output : [output];
    result.urls = candidates.filter(isHttpUrl);
  } else if (output !== null && typeof output === "object" && !Array.isArray(output)) {
    result.data = output as Record<string, unknown>;
  } else if (typeof output === "string" || (Array.isArray(output) && output.every((piece) => typeof piece === "string"))) {
    const text = typeof output === "string" ? output : output.join("");
    result.data = textEndpoint === "essay" ? { text, word_count: text.split(/\s+/).filter(Boolean).length } : { text };
  }
  const tokens = tokensOf(metrics, { input: "input_token_count", output: "output_token_count" });
  if (tokens) result.tokens = tokens;
  return result;
}
