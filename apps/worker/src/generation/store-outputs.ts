import type { Endpoint } from "@gen/catalog";
import { WorkflowError } from "@gen/errors";
import type { CompletedResult } from "@gen/providers";
import { downloadFile, extensionFor, type Storage } from "@gen/storage";

const OUTPUT_FIELD: Partial<Record<Endpoint, string>> = { images: "image_urls", videos: "video_urls", audio: "audio_urls" };

export interface DownloadLimits {
  maxBytes: number;
  timeoutMs: number;
}

/**
 * Turns a provider result into the task's `output`. Media (generated files, or upstream URLs
 * downloaded with bounded size and time) is stored under `tasks/<id>/` and referenced by CDN URL;
 * any failure to fetch or store is 80005. Keys are derived from the task id, so a retried job
 * overwrites the same objects instead of leaving orphans.
 */
export async function storeOutputs(taskId: string, endpoint: Endpoint, result: CompletedResult, storage: Storage, limits: DownloadLimits): Promise<Record<string, unknown>> {
  const field = OUTPUT_FIELD[endpoint];
  try {
    const urls: string[] = [];
    let index = 0;
    for (const file of result.files ?? []) {
      urls.push((await storage.put(`tasks/${taskId}/${index++}.${file.extension}`, file.data, file.contentType)).url);
    }
    for (const url of result.urls ?? []) {
      const { data, contentType } = await downloadFile(url, limits);
      const type = contentType?.split(";")[0]?.trim() ?? "application/octet-stream";
      const extension = extensionFor(type) ?? "bin";
      urls.push((await storage.put(`tasks/${taskId}/${index++}.${extension}`, data, type)).url);
    }
    if (!field) return { ...(result.data ?? {}) };
    return { [field]: urls };
  } catch (error) {
    throw new WorkflowError(80005, undefined, { cause: error });
  }
}
