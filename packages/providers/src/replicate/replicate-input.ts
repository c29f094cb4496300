import { mapInput } from "../map-input.ts";
import { sizeToCommonRatio } from "../aspect-ratio.ts";
import type { ProviderJob } from "../provider.ts";

/**
 * Our parameters under the names most Replicate models use (docs/providers.md#replicate). `size`
 * becomes `aspect_ratio`, its value converted ("1024x1024" -> "1:1", "1344x768" -> the nearest common "16:9"); a catalog entry whose model
 * takes `width`/`height` or another name maps them with `upstreamInputMap`.
 */
export const REPLICATE_DEFAULT_INPUT_MAP: Readonly<Record<string, string | null>> = {
  n: "num_outputs",
  size: "aspect_ratio",
  duration_seconds: "duration",
  image_url: "image",
};

/** Text-to-speech models on Replicate (Kokoro, MiniMax Speech, XTTS) read the words from `text`. */
const AUDIO_DEFAULT_INPUT_MAP: Readonly<Record<string, string | null>> = { ...REPLICATE_DEFAULT_INPUT_MAP, prompt: "text" };

export function replicateInput(job: Pick<ProviderJob, "endpoint" | "params" | "inputMap" | "constantInput">): Record<string, unknown> {
  const defaults = job.endpoint === "audio" ? AUDIO_DEFAULT_INPUT_MAP : REPLICATE_DEFAULT_INPUT_MAP;
  const input = mapInput({ params: job.params, inputMap: job.inputMap }, defaults);
  if ("aspect_ratio" in input) input.aspect_ratio = sizeToCommonRatio(input.aspect_ratio);
  return { ...input, ...job.constantInput };
}

/** `owner/name` runs the model's latest version; `owner/name:version` (or a bare version id) pins one. */
export function replicateTarget(upstreamModel: string): { model: string } | { version: string } {
  const colon = upstreamModel.indexOf(":");
  if (colon >= 0) return { version: upstreamModel.slice(colon + 1) };
  return upstreamModel.includes("/") ? { model: upstreamModel } : { version: upstreamModel };
}
