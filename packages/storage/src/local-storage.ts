import { randomUUID } from "node:crypto";
import { mkdir, open, rename, rm } from "node:fs/promises";
import path from "node:path";
import { checkArchiveKey, checkFile, checkPrefix, publicUrl } from "./media-key.ts";
import type { Storage, StoredFile } from "./storage.ts";
import { StorageError } from "./storage-error.ts";

export interface LocalStorageOptions {
  /** The directory the gateway serves under /cdn (STORAGE_DIR). Created on demand. */
  dir: string;
  cdnUrl: string;
}

/**
 * Files under a local directory. Each put writes a temporary file next to the target and
 * renames it over the target, so a reader (the /cdn static server) sees the old file or the
 * whole new one, never a partial write. The temporary name starts with "." so the static
 * server (dotfiles: "deny") never serves it.
 */
export function createLocalStorage(options: LocalStorageOptions): Storage {
  const root = path.resolve(options.dir);
  // The checks already rule out escapes; this guards against a future change to them.
  const inside = (key: string) => {
    const target = path.join(root, ...key.split("/").filter(Boolean));
    const relative = path.relative(root, target);
    if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) throw new StorageError(`storage key "${key}" leaves the storage directory`);
    return target;
  };
  const write = async (key: string, data: Buffer) => {
    const target = inside(key);
    const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomUUID()}.tmp`);
    try {
      await mkdir(path.dirname(target), { recursive: true });
      await writeDurably(temp, data);
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true }).catch(() => {});
      throw new StorageError(`could not store "${key}" in ${root}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  };
  return {
    async put(key: string, data: Buffer, contentType: string): Promise<StoredFile> {
      const file = checkFile(key, data, contentType);
      await write(file.key, data);
      return { key: file.key, url: publicUrl(options.cdnUrl, file.key), bytes: data.length };
    },
    async deletePrefix(prefix: string): Promise<void> {
      const target = inside(checkPrefix(prefix));
      try {
        await rm(target, { recursive: true, force: true });
      } catch (error) {
        throw new StorageError(`could not delete "${prefix}" in ${root}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
    },
    async putArchive(key: string, data: Buffer): Promise<void> {
      await write(checkArchiveKey(key, data), data);
    },
  };
}

// fsync before the rename: after a crash the target holds complete bytes, not an empty file.
async function writeDurably(filePath: string, data: Buffer): Promise<void> {
  const handle = await open(filePath, "wx", 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
