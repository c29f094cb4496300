import type { CompletedResult } from "../provider.ts";

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** `usage.input_tokens`/`output_tokens` of an answer (Responses, gpt-image), for token billing. */
export function tokensOf(usage: unknown): CompletedResult["tokens"] {
  const counts = usage as { input_tokens?: unknown; output_tokens?: unknown } | null | undefined;
  if (!isCount(counts?.input_tokens) || !isCount(counts.output_tokens)) return undefined;
  return { input: counts.input_tokens, output: counts.output_tokens };
}
