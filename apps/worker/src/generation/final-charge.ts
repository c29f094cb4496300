import { moderationCharge, tokenCharge, type ModelEntry } from "@gen/catalog";
import { Wf } from "@gen/errors";
import type { PolicyStage } from "@gen/providers";

/**
 * docs/api.md#credits-and-refunds: a completed task keeps at most its reservation. Token-billed models are
 * charged by tokens; when tokens are missing but images exist, the reservation is charged (never
 * BillingUnverified for new tasks). Failures refund in full except ContentPolicy on the output, which keeps the
 * model's post-generation charge.
 */
export function completedCharge(model: ModelEntry, reserved: number, tokens: { input: number; output: number } | undefined): number {
  if (model.pricing?.method !== "tokens") return reserved;
  return tokens ? tokenCharge(model, tokens, reserved) : reserved;
}

export function failedCharge(model: ModelEntry | undefined, reserved: number, code: number, stage: PolicyStage | undefined): number {
  if (code !== Wf.ContentPolicy || !model) return 0;
  return moderationCharge(model, stage ?? "input", reserved);
}
