import { randomUUID } from "node:crypto";
import { mkdir, open, rename, rm, rmdir } from "node:fs/promises";
import path from "node:path";
import { checkFile, checkKey, publicUrl } from "./media-key.ts";
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
  const pathOf = (key: string) => {
    const target = path.join(root, ...key.split("/"));
    // checkKey already rules out escapes; this guards against a future change to it.
    const relative = path.relative(root, target);
    if (relative.startsWith("..") || path.isAbsolute(relative)) throw new StorageError(`storage key "${key}" leaves the storage directory`);
    return target;
  };
  return {
    async put(key: string, data: Buffer, contentType: string): Promise<StoredFile> {
      const file = checkFile(key, data, contentType);
      const target = pathOf(file.key);
      const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomUUID()}.tmp`);
      try {
        await mkdir(path.dirname(target), { recursive: true });
        await writeDurably(temp, data);
        await rename(temp, target);
      } catch (error) {
        await rm(temp, { force: true }).catch(() => {});
        throw new StorageError(`could not store "${key}" in ${root}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      return { key: file.key, url: publicUrl(options.cdnUrl, file.key), bytes: data.length };
    },
    async delete(keys: readonly string[]): Promise<void> {
      const targets = keys.map((key) => (checkKey(key), pathOf(key)));
      for (const [i, target] of targets.entries()) {
        try {
          await rm(target, { force: true });
        } catch (error) {
          throw new StorageError(`could not remove "${keys[i]}" from ${root}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        }
        await removeEmptyParents(root, path.dirname(target));
      }
    },
  };
}

// A task's directory goes with its last file, so a purged store does not fill up with empty
// directories; one that still holds something (or is already gone) stops the walk.
async function removeEmptyParents(root: string, dir: string): Promise<void> {
  for (let current = dir; current !== root && current.startsWith(root + path.sep); current = path.dirname(current)) {
    try {
      await rmdir(current);
    } catch {
      return;
    }
  }
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
