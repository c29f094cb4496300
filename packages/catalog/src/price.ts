import { ApiError, Err } from "@gen/errors";
import type { ModelEntry } from "./model-entry.ts";
import { codePointLength, quote } from "./safe-text.ts";

export interface PriceQuote {
  /** Credits reserved at submission: the exact price (flat) or the most it can cost (tokens). */
  reserve: number;
  method: "flat" | "tokens";
}

// Multipliers such as 0.3 make float noise (10 × 0.3 = 3.0000000000000004); within this relative
// distance of a whole number the price is that number.
const FLOAT_NOISE = 1e-9;

/**
 * credits × every unit count × every multiplier (README "pricing"). Throws ApiError 30002 when the
 * entry cannot price these params: no pricing, a value missing from a table, a fractional total.
 */
export function priceFor(model: ModelEntry, params: Record<string, unknown>): PriceQuote {
  const fail = (why: string): never => {
    throw new ApiError(Err.PricingUnknown, `Cannot determine pricing for model ${model.id}: ${why}`);
  };
  const pricing = model.pricing ?? fail("the catalog gives it no price");
  let total = pricing.credits;
  for (const unit of pricing.units ?? []) {
    const name = typeof unit === "string" ? unit : unit.param;
    const count = quantity(Object.hasOwn(params, name) ? params[name] : undefined);
    if (count === undefined) return fail(`its price depends on ${name}, which was not given as a countable value`);
    total *= typeof unit === "string" ? count : Math.ceil(count / unit.per);
  }
  for (const [name, table] of Object.entries(pricing.multipliers ?? {})) {
    const value = Object.hasOwn(params, name) ? params[name] : undefined;
    if (value === undefined) return fail(`its price depends on ${name}, which was not given and has no default`);
    const key = typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : "";
    const factor = Object.hasOwn(table, key) ? table[key] : undefined;
    if (factor === undefined) return fail(`no price is set for ${name} ${quote(key)}`);
    total *= factor;
  }
  const whole = Math.round(total);
  if (!Number.isSafeInteger(whole) || whole < 0 || Math.abs(total - whole) > FLOAT_NOISE * Math.max(1, whole)) {
    return fail(`the computed price (${total}) is not a whole number of credits`);
  }
  return { reserve: whole, method: pricing.method };
}

/** A number as is, a string's length in code points, an array's sum; otherwise not countable. */
function quantity(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value === "string") return codePointLength(value);
  if (!Array.isArray(value)) return undefined;
  let sum = 0;
  for (const item of value) {
    const count = quantity(item);
    if (count === undefined) return undefined;
    sum += count;
  }
  return sum;
}

/**
 * Final charge of a token-billed task: the token rates, rounded up to a whole credit, never more
 * than what was reserved. Throws for a model that is not billed by tokens (a programming error).
 */
export function tokenCharge(model: ModelEntry, tokens: { input: number; output: number }, reserved: number): number {
  const pricing = model.pricing;
  if (pricing?.method !== "tokens") throw new Error(`model ${model.id} is not billed by tokens`);
  const exact = (tokens.input * pricing.inputPer1k + tokens.output * pricing.outputPer1k) / 1000;
  return Math.min(reserved, Math.max(0, Math.ceil(exact - FLOAT_NOISE)));
}

/** Credits kept when a task fails with 80006 (docs/api.md#content-policy-violations-80006); the rest is refunded. */
export function moderationCharge(model: ModelEntry, stage: "input" | "output", reserved: number): number {
  return stage === "input" ? 0 : Math.min(model.moderationRefund.output, reserved);
}
