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
   * Removes every file under a prefix such as `tasks/<taskId>/` (retention). Nothing there is no
   * error, so a repeated call is harmless. Throws StorageError when the backend fails.
   */
  deletePrefix(prefix: string): Promise<void>;
  /**
   * Stores a record that is not media under `archive/...jsonl` (the task archive), overwriting the
   * same key. The gateway's /cdn route never serves `archive/`. Throws StorageError on any failure.
   */
  putArchive(key: string, data: Buffer): Promise<void>;
}
