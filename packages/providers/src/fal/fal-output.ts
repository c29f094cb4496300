import { Wf } from "@gen/errors";
import type { ProviderResult } from "../provider.ts";

type Json = Record<string, unknown>;

function asObject(value: unknown): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}

function httpUrl(value: unknown): string | undefined {
  const url = typeof value === "string" ? value : asObject(value)?.url;
  if (typeof url !== "string") return undefined;
  try {
    const { protocol } = new URL(url);
    return protocol === "http:" || protocol === "https:" ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The image URLs of a result, less those its safety checker flagged (`has_nsfw_concepts[i]`):
 * fal answers a flagged image with a black one, which is no output.
 */
function imageUrls(result: Json): { urls: string[]; flagged: number } {
  const images = Array.isArray(result.images) ? result.images : asObject(result.image) ? [result.image] : [];
  const nsfw = Array.isArray(result.has_nsfw_concepts) ? result.has_nsfw_concepts : [];
  const urls: string[] = [];
  let flagged = 0;
  images.forEach((image, index) => {
    if (nsfw[index] === true) flagged++;
    else {
      const url = httpUrl(image);
      if (url) urls.push(url);
    }
  });
  return { urls, flagged };
}

/**
 * A completed fal result as ours: `images[].url` (or `image.url`), `video.url`, `audio.url`
 * (or `audio_file.url`, `audio_url`) become `urls` for the worker to download. Every image
 * flagged by the safety checker is a content-policy verdict on the output (80006). A result
 * with none of these is completed without output: the worker's 80004.
 */
export function falOutput(data: unknown, requestId?: string): ProviderResult {
  const result = asObject(data) ?? {};
  const { urls, flagged } = imageUrls(result);
  if (flagged > 0 && urls.length === 0) {
    const message = "fal's safety checker flagged every image (has_nsfw_concepts)";
    return { state: "failed", code: Wf.ContentPolicy, stage: "output", message, upstream: { status: 200, message, ...(requestId ? { requestId } : {}) } };
  }
  for (const media of [result.video, result.audio, result.audio_file, result.audio_url]) {
    const url = httpUrl(media);
    if (url) urls.push(url);
  }
  return { state: "completed", urls };
}
