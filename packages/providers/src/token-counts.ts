import type { CompletedResult } from "./provider.ts";

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/**
 * The token counts of a provider's usage object, for token billing: both present as non-negative
 * integers, or none. OpenAI (Responses, gpt-image) and the HTTP protocol name them
 * `input_tokens`/`output_tokens`; Replicate's `metrics` `input_token_count`/`output_token_count`.
 */
export function tokensOf(
  usage: unknown,
  names: { input: string; output: string } = { input: "input_tokens", output: "output_tokens" },
): CompletedResult["tokens"] {
  if (usage === null || typeof usage !== "object") return undefined;
  const input = (usage as Record<string, unknown>)[names.input];
  const output = (usage as Record<string, unknown>)[names.output];
  return isCount(input) && isCount(output) ? { input, output } : undefined;
}
