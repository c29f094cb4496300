import { mapInput } from "../map-input.ts";
import type { ProviderJob } from "../provider.ts";

/**
 * Our parameter -> fal's input name, before the catalog's `upstreamInputMap`. The others keep
 * their names: `prompt`, `text` (text to speech), `voice`, `image_url` (a video's reference image),
 * `quality` and the rest.
 */
const FAL_DEFAULT_INPUT_MAP: Readonly<Record<string, string | null>> = {
  n: "num_images",
  size: "image_size",
  duration_seconds: "duration",
};

const SIZE = /^(\d{1,5})x(\d{1,5})$/;

/**
 * The input of a fal request. `image_size` written as our `WIDTHxHEIGHT` becomes fal's
 * `{ width, height }`; fal's own names (`square_hd`, `landscape_16_9`, ...) pass as they are.
 * A video's `duration` becomes a string.
 */
export function falInput(job: Pick<ProviderJob, "endpoint" | "params" | "inputMap" | "constantInput">): Record<string, unknown> {
  const input = mapInput(job, FAL_DEFAULT_INPUT_MAP);
  // fal's video models take their duration as one of a few strings ("5", "10"), never a number.
  if (job.endpoint === "videos" && typeof input.duration === "number") input.duration = String(input.duration);
  const size = typeof input.image_size === "string" ? SIZE.exec(input.image_size) : null;
  if (size) input.image_size = { width: Number(size[1]), height: Number(size[2]) };
  return input;
}
