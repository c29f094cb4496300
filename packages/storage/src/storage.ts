/** What `put` reports: the key it stored, its public URL (`${cdnUrl}/${key}`) and its size. */
export interface StoredFile {
  key: string;
  url: string;
  bytes: number;
}

/** Where generated media goes. Every backend validates keys and types the same way (media-key.ts). */
export interface Storage {
  /**
   * Stores bytes under a key like `tasks/<taskId>/<index>.<ext>`. Idempotent: the same key
   * overwrites, so a retried job replaces its files instead of leaving orphans. Throws
   * StorageError on any failure, including a refused key or content type.
   */
  put(key: string, data: Buffer, contentType: string): Promise<StoredFile>;
  /**
   * Removes the files stored under `keys` (retention). A key with nothing stored under it is not
   * an error, so a repeated or interrupted purge can simply run again. Every key is checked as
   * `put` checks it before anything is removed; throws StorageError on a refused key or any
   * failure (some files may then be gone, the rest are not).
   */
  delete(keys: readonly string[]): Promise<void>;
}
