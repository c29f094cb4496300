import type { Endpoint } from "@gen/domain";
import { inferEndpoint } from "../infer-endpoint.ts";

// fal's text-to-speech and music models rarely say "audio" in their ids (fal-ai/playai/tts/v3,
// fal-ai/stable-audio, fal-ai/minimax-music): those words mean audio here as well.
const AUDIO_WORDS = ["tts", "speech", "music"];

export function falEndpoint(model: string): Endpoint {
  const lower = model.toLowerCase();
  return AUDIO_WORDS.some((word) => lower.includes(word)) ? "audio" : inferEndpoint(model);
}

/** Our parameters back from a fal input, for the simulated generation. */
export function simulatorParams(input: Record<string, unknown>): Record<string, unknown> {
  const params: Record<string, unknown> = { ...input };
  if (input.num_images !== undefined) params.n = input.num_images;
  const size = input.image_size;
  if (size !== null && typeof size === "object") {
    const { width, height } = size as { width?: unknown; height?: unknown };
    if (typeof width === "number" && typeof height === "number") params.size = `${width}x${height}`;
  }
  if (input.duration !== undefined) params.duration_seconds = Number(input.duration);
  return params;
}

/** The app a model id belongs to, as fal's status, result and cancel URLs name it: `owner/alias`. */
export function falAppId(model: string): string {
  const parts = model.split("/");
  const namespaced = parts[0] === "workflows" || parts[0] === "comfy";
  return parts.slice(0, namespaced ? 3 : 2).join("/");
}
