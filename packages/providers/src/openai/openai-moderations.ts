import { randomUUID } from "node:crypto";
import type OpenAI from "openai";
import type { ModerationCreateParams, ModerationCreateResponse } from "openai/resources/moderations";
import { mapInput } from "../map-input.ts";
import type { CompletedResult, ProviderJob, Submitted } from "../provider.ts";
import { submitError } from "./openai-error.ts";

type Verdict = { flagged: boolean; categories: Record<string, boolean>; category_scores: Record<string, number> };

/**
 * One verdict over every input string, as our moderation output has one: flagged when any is, a
 * category set when it is for any string, each score the highest. With a single string it is
 * OpenAI's result exactly as returned.
 */
export function mergeVerdicts(results: readonly Verdict[]): Verdict | undefined {
  if (results.length === 1) {
    const [only] = results as [Verdict];
    return { flagged: only.flagged, categories: only.categories, category_scores: only.category_scores };
  }
  if (results.length === 0) return undefined;
  const merged: Verdict = { flagged: false, categories: {}, category_scores: {} };
  for (const result of results) {
    merged.flagged ||= result.flagged;
    for (const [name, set] of Object.entries(result.categories)) merged.categories[name] = (merged.categories[name] ?? false) || set;
    for (const [name, score] of Object.entries(result.category_scores)) merged.category_scores[name] = Math.max(merged.category_scores[name] ?? 0, score);
  }
  return merged;
}

/** The Moderations API answers at once: the verdict is the submit's answer. */
export async function submitModeration(client: OpenAI, job: ProviderJob, model: string, signal?: AbortSignal): Promise<Submitted> {
  const body = { model, ...mapInput(job, { input: "input" }) } as unknown as ModerationCreateParams;
  let answer: { data: ModerationCreateResponse; request_id: string | null };
  try {
    answer = await client.moderations.create(body, { signal }).withResponse();
  } catch (error) {
    throw submitError(error, signal);
  }
  const verdict = mergeVerdicts((answer.data.results ?? []) as unknown as Verdict[]);
  const result: CompletedResult = verdict ? { state: "completed", data: verdict } : { state: "completed" };
  return { upstreamId: answer.request_id ?? `sync_${randomUUID()}`, result };
}
