/** Steering directives of the simulated provider (docs/api.md#simulator-directives). */
export interface SimDirectives {
  fail?: number;
  stage?: "input" | "output";
  delayMs?: number;
  noTokens: boolean;
}

const SIM_DIRECTIVE = /\[\[sim:([a-z_]+)(?:=([^\]]*))?\]\]/g;

/** Every string in the params, however deep, in a stable order: directives may sit in any of them. */
export function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === "object") {
    return Object.keys(value)
      .sort()
      .flatMap((key) => stringsIn((value as Record<string, unknown>)[key]));
  }
  return [];
}

/** Reads the directives; an unknown or malformed one is ignored, and the first of each kind wins. */
export function parseSimDirectives(params: Record<string, unknown>): SimDirectives {
  const found: SimDirectives = { noTokens: false };
  for (const text of stringsIn(params)) {
    for (const [, name, value = ""] of text.matchAll(SIM_DIRECTIVE)) {
      if (name === "fail" && found.fail === undefined && /^\d{5}$/.test(value)) found.fail = Number(value);
      else if (name === "stage" && found.stage === undefined && (value === "input" || value === "output")) found.stage = value;
      else if (name === "delay_ms" && found.delayMs === undefined && /^\d{1,9}$/.test(value)) found.delayMs = Number(value);
      else if (name === "no_tokens") found.noTokens = true;
    }
  }
  return found;
}

/** The text with the directives taken out, so that they do not show in generated output. */
export function stripSimDirectives(text: string): string {
  return text
    .replace(SIM_DIRECTIVE, "")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}
