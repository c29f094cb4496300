import type { ProviderFile } from "@gen/providers";

/**
 * `[[sim:fail=80005]]`: the simulated provider completes with one file carrying this extension.
 * 80005 belongs to the worker's storage step, so the provider can only ask for it: a storage
 * backend must refuse such a file (an extension allow-list does that by itself), and the worker
 * then fails the task with 80005 as it would for any storage error.
 */
export const STORAGE_FAULT_EXTENSION = "fail-storage";

export function isStorageFault(file: ProviderFile): boolean {
  return file.extension === STORAGE_FAULT_EXTENSION;
}

export function storageFaultFile(): ProviderFile {
  return { contentType: "application/octet-stream", extension: STORAGE_FAULT_EXTENSION, data: Buffer.from("simulated storage failure\n") };
}
