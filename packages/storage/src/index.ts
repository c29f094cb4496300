export type { Storage, StoredFile } from "./storage.ts";
export { StorageError } from "./storage-error.ts";
export { createLocalStorage, type LocalStorageOptions } from "./local-storage.ts";
export { createS3Storage, type S3StorageOptions } from "./s3-storage.ts";
export { createStorage, type StorageSettings } from "./create-storage.ts";
export { extensionFor, type MediaExtension } from "./media-types.ts";
export { downloadFile, type DownloadLimits, type DownloadedFile } from "./download-file.ts";
export { DownloadError, type DownloadFailure } from "./download-error.ts";
