import { AnswerTooLargeError } from "@gen/capped-body";
import { Wf } from "@gen/errors";
import type OpenAI from "openai";
import type { Video, VideoCreateParams } from "openai/resources/videos";
import { mapInput } from "../map-input.ts";
import type { ProviderJob, ProviderResult, Submitted } from "../provider.ts";
import { pollError, submitError } from "./openai-error.ts";
import { jobFailure, terminalFailure } from "./openai-job-failure.ts";

const VIDEO_INPUT: Record<string, string | null> = { prompt: "prompt", duration_seconds: "seconds", size: "size", image_url: "input_reference" };

/**
 * The Videos API's input: `seconds` is a string there ("4", "8", "12"), and a reference image
 * given by URL is `input_reference: {image_url}`.
 */
export function videoRequest(job: ProviderJob, model: string): Record<string, unknown> {
  const input = mapInput(job, VIDEO_INPUT);
  if (typeof input.seconds === "number") input.seconds = String(input.seconds);
  if (typeof input.input_reference === "string") input.input_reference = { image_url: input.input_reference };
  return { model, ...input };
}

export async function submitVideo(client: OpenAI, job: ProviderJob, model: string, signal?: AbortSignal): Promise<Submitted> {
  let video: Video;
  try {
    video = await client.videos.create(videoRequest(job, model) as unknown as VideoCreateParams, { signal });
  } catch (error) {
    throw submitError(error, signal);
  }
  if (typeof video.id !== "string" || video.id === "") throw submitError(new Error("OpenAI answered without a video id"), signal);
  return { upstreamId: video.id };
}

function isMp4(data: Buffer): boolean {
  return data.length >= 12 && data.toString("latin1", 4, 8) === "ftyp";
}

function tooLarge(error: unknown): AnswerTooLargeError | undefined {
  for (let current = error; current instanceof Error; current = current.cause) if (current instanceof AnswerTooLargeError) return current;
  return undefined;
}

/**
 * A completed video's MP4, read through the media cap. It is fetched here rather than handed to
 * the worker as a URL because the content route needs the API key. A video over the cap will be
 * as large at every poll, so that is a terminal failure, not a failed poll.
 */
async function content(media: OpenAI, id: string, signal?: AbortSignal): Promise<ProviderResult> {
  let data: Buffer;
  try {
    const response = await media.videos.downloadContent(id, {}, { signal });
    data = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    const large = tooLarge(error);
    if (large && !signal?.aborted) return terminalFailure(`the video's content: ${large.message}`);
    const failure = pollError(error, signal);
    if (failure instanceof Error) throw failure;
    return { state: "failed", code: Wf.UpstreamFailed, upstream: { ...failure.notFound, message: "OpenAI has no content for the video" } };
  }
  // Bytes that are not an MP4 are not stored: completed without output, the worker's 80004.
  return isMp4(data) ? { state: "completed", files: [{ contentType: "video/mp4", extension: "mp4", data }] } : { state: "completed" };
}

export async function pollVideo(clients: { api: OpenAI; media: OpenAI }, id: string, signal?: AbortSignal): Promise<ProviderResult> {
  let video: Video;
  try {
    video = await clients.api.videos.retrieve(id, { signal });
  } catch (error) {
    const failure = pollError(error, signal);
    if (failure instanceof Error) throw failure;
    return { state: "failed", code: Wf.UpstreamFailed, upstream: { ...failure.notFound, message: "OpenAI does not know the video" } };
  }
  switch (video.status) {
    case "queued":
    case "in_progress":
      return { state: "running" };
    case "completed":
      return content(clients.media, id, signal);
    case "failed":
      return jobFailure(video.error);
    default:
      return terminalFailure(`unknown video status ${JSON.stringify(video.status)}`);
  }
}

/** The Videos API has no cancel: deleting the video is the nearest, and stops nothing already paid. */
export async function cancelVideo(client: OpenAI, id: string): Promise<void> {
  await client.videos.delete(id);
}
