import { sizeToRatio } from "../aspect-ratio.ts";
import { mapInput } from "../map-input.ts";
import type { ProviderJob } from "../provider.ts";

/**
 * Our parameters under Runway's names (docs/providers.md#runway). Runway validates its bodies
 * strictly, so the parameters it has no name for (`n`, `quality`, `voice`) are dropped by default.
 */
export const RUNWAY_DEFAULT_INPUT_MAP: Readonly<Record<string, string | null>> = {
  prompt: "promptText",
  image_url: "promptImage",
  duration_seconds: "duration",
  size: "ratio",
  n: null,
  quality: null,
  voice: null,
};

/**
 * The body of a Runway generation: `size` "1280x720" becomes `ratio` "1280:720" (Runway names
 * output resolutions that way); for an image, the reference image goes to `referenceImages`.
 */
export function runwayInput(job: Pick<ProviderJob, "endpoint" | "params" | "inputMap" | "constantInput">): Record<string, unknown> {
  const input = mapInput({ params: job.params, inputMap: job.inputMap }, RUNWAY_DEFAULT_INPUT_MAP);
  if ("ratio" in input) input.ratio = sizeToRatio(input.ratio, ":", false);
  if (job.endpoint === "images" && typeof input.promptImage === "string") {
    input.referenceImages = [{ uri: input.promptImage }];
    delete input.promptImage;
  }
  return { ...input, ...job.constantInput };
}
