import type { Endpoint } from "@gen/catalog";
import { FailureStep } from "@gen/domain";
import { Wf, WorkflowError } from "@gen/errors";
import type { CompletedResult } from "@gen/providers";
import { bytesMatchType, downloadFile, extensionFor, type MediaExtension } from "@gen/storage";
import type { GenerationDeps } from "./generation-deps.ts";

const OUTPUT_FIELD: Partial<Record<Endpoint, string>> = { images: "image_urls", videos: "video_urls", audio: "audio_urls" };
// What a media endpoint may publish: an image task's URLs never serve JSON or text.
const ENDPOINT_MEDIA: Partial<Record<Endpoint, readonly MediaExtension[]>> = {
  images: ["png", "jpg", "webp", "gif"],
  videos: ["mp4", "webm"],
  audio: ["wav", "mp3", "ogg", "webm"],
};

/**
 * Turns a provider result into the task's `output`. Media (generated files, or upstream URLs
 * downloaded through the address guard with bounded size and time) is stored under
 * `tasks/<id>/` and referenced by CDN URL; any failure to fetch or store is 80005, and so is a
 * download whose bytes are not what its Content-Type says or not what the endpoint produces
 * (nothing is stored for it). Keys are derived from the task id, so a retried job overwrites
 * the same objects instead of leaving orphans.
 */
export async function storeOutputs(
  taskId: string,
  endpoint: Endpoint,
  result: CompletedResult,
  deps: Pick<GenerationDeps, "storage" | "downloadGuard" | "config">,
): Promise<Record<string, unknown>> {
  const field = OUTPUT_FIELD[endpoint];
  const limits = { maxBytes: deps.config.downloadMaxBytes, timeoutMs: deps.config.downloadTimeoutMs };
  let step: OutputsNotStored["step"] = FailureStep.Store;
  try {
    const urls: string[] = [];
    let index = 0;
    for (const file of result.files ?? []) {
      urls.push((await deps.storage.put(`tasks/${taskId}/${index++}.${file.extension}`, file.data, file.contentType)).url);
    }
    for (const url of result.urls ?? []) {
      step = FailureStep.Download;
      const { data, contentType } = await downloadFile(url, limits, deps.downloadGuard);
      const type = contentType?.split(";")[0]?.trim() ?? "application/octet-stream";
      const extension = extensionFor(type);
      if (!extension || !(ENDPOINT_MEDIA[endpoint]?.includes(extension) ?? true)) throw new Error(`upstream file of type ${type} is not ${endpoint} output`);
      if (!bytesMatchType(type, data)) throw new Error(`upstream file declared ${type} but its bytes are not`);
      step = FailureStep.Store;
      urls.push((await deps.storage.put(`tasks/${taskId}/${index++}.${extension}`, data, type)).url);
    }
    if (!field) return { ...(result.data ?? {}) };
    return { [field]: urls };
  } catch (error) {
    throw new OutputsNotStored(step, error);
  }
}

/** 80005, and the step that failed: fetching an upstream's file, or writing to storage (the task's failure cause). */
export class OutputsNotStored extends WorkflowError {
  constructor(
    readonly step: typeof FailureStep.Download | typeof FailureStep.Store,
    cause: unknown,
  ) {
    super(Wf.StorageFailed, undefined, { cause });
    this.name = "OutputsNotStored";
  }
}
