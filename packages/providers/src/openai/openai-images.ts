import { randomUUID } from "node:crypto";
import type OpenAI from "openai";
import type { ImageGenerateParamsNonStreaming, ImagesResponse } from "openai/resources/images";
import { mapInput } from "../map-input.ts";
import type { CompletedResult, ProviderFile, ProviderJob, Submitted } from "../provider.ts";
import { imageType } from "./image-type.ts";
import { submitError } from "./openai-error.ts";
import { isHttpUrl } from "../http-url.ts";
import { tokensOf } from "../token-counts.ts";

/** Our image parameters under the Images API's names; a reference image has no place in a generation. */
const IMAGE_INPUT: Record<string, string | null> = { prompt: "prompt", n: "n", size: "size", quality: "quality", image_url: null };

/** gpt-image models grade quality low/medium/high; our `standard`/`hd` (DALL·E's words) become their nearest. */
const GPT_IMAGE_QUALITY: Record<string, string> = { standard: "medium", hd: "high" };

export function imageRequest(job: ProviderJob, model: string): Record<string, unknown> {
  const input = mapInput(job, IMAGE_INPUT);
  if (model.startsWith("gpt-image") && typeof input.quality === "string") input.quality = GPT_IMAGE_QUALITY[input.quality] ?? input.quality;
  return { model, ...input };
}

/** An image as stored: base64 decoded and typed by its bytes; anything else is dropped. */
function fileOf(b64: string): ProviderFile | undefined {
  const data = Buffer.from(b64, "base64");
  const type = imageType(data);
  return type && { ...type, data };
}

/** The Images API answers with the images themselves: the result is the submit's answer. */
export async function submitImages(client: OpenAI, job: ProviderJob, model: string, signal?: AbortSignal): Promise<Submitted> {
  const body = imageRequest(job, model) as unknown as ImageGenerateParamsNonStreaming;
  let answer: { data: ImagesResponse; request_id: string | null };
  try {
    answer = await client.images.generate(body, { signal }).withResponse();
  } catch (error) {
    throw submitError(error, signal);
  }
  const result: CompletedResult = { state: "completed" };
  const files = (answer.data.data ?? []).flatMap((image) => (typeof image.b64_json === "string" ? (fileOf(image.b64_json) ?? []) : []));
  const urls = (answer.data.data ?? []).flatMap((image) => (isHttpUrl(image.url) ? [image.url] : []));
  if (files.length > 0) result.files = files;
  if (urls.length > 0) result.urls = urls;
  const tokens = tokensOf(answer.data.usage);
  if (tokens) result.tokens = tokens;
  return { upstreamId: answer.request_id ?? `sync_${randomUUID()}`, result };
}
