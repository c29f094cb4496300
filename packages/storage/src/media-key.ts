import { canonicalType, extensionFor, isMediaExtension } from "./media-types.ts";
import { StorageError } from "./storage-error.ts";

// S3's limit; local paths stay far below PATH_MAX with it too.
const MAX_KEY_LENGTH = 1024;
const KEY_CHARACTERS = /^[A-Za-z0-9._/-]+$/;

export interface CheckedFile {
  key: string;
  /** The Content-Type the file is stored and served with. */
  contentType: string;
}

/**
 * Validates a put() before any backend touches it. Keys become file paths and URL paths
 * unescaped, so only plain relative segments pass. A segment starting with "." (which
 * includes "..") is refused too: the gateway's /cdn static server denies dotfiles, so such a
 * file could never be served. The content type must name the key's extension, so a file is
 * never served as something other than what its name says.
 */
export function checkFile(key: string, data: Buffer, contentType: string): CheckedFile {
  const extension = checkKey(key);
  if (!Buffer.isBuffer(data)) throw new StorageError(`data for "${key}" is not a Buffer`);
  if (typeof contentType !== "string" || extensionFor(contentType) !== extension) {
    throw new StorageError(`content type "${String(contentType)}" does not match the extension of "${key}"`);
  }
  return { key, contentType: canonicalType(extension) };
}

/**
 * The key rules of `checkFile` alone (a delete names keys only): returns the key's extension, or
 * throws StorageError. A key that could not have been stored cannot name something to remove.
 */
function checkKey(key: string): string {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH) throw refused(key, "must be 1 to 1024 characters");
  if (key.includes("\\")) throw refused(key, "contains a backslash");
  if (key.startsWith("/")) throw refused(key, "is absolute");
  if (!KEY_CHARACTERS.test(key)) throw refused(key, "has characters outside [A-Za-z0-9._/-]");
  const segments = key.split("/");
  if (segments.some((segment) => segment === "")) throw refused(key, "has an empty segment");
  if (segments.some((segment) => segment.startsWith("."))) throw refused(key, 'has a segment starting with "."');
  const name = segments[segments.length - 1] ?? "";
  const dot = name.lastIndexOf(".");
  const extension = dot > 0 ? name.slice(dot + 1) : "";
  if (!isMediaExtension(extension)) throw refused(key, `has an extension that is not stored ("${extension}")`);
  return extension;
}

/** The first segment of every archive key; the /cdn route refuses it. */
export const ARCHIVE_ROOT = "archive";

/** A prefix to delete: plain segments (the rules of a key) ending in "/", so it can only name a directory. */
export function checkPrefix(prefix: string): string {
  if (typeof prefix !== "string" || !prefix.endsWith("/")) throw refused(prefix, 'must end with "/"');
  checkSegments(prefix.slice(0, -1));
  return prefix;
}

/** An archive key: `archive/.../<name>.jsonl`, segments as for media. */
export function checkArchiveKey(key: string, data: Buffer): string {
  checkSegments(key);
  if (!key.startsWith(`${ARCHIVE_ROOT}/`) || !key.endsWith(".jsonl")) throw refused(key, `is not ${ARCHIVE_ROOT}/.../<name>.jsonl`);
  if (!Buffer.isBuffer(data)) throw new StorageError(`data for "${key}" is not a Buffer`);
  return key;
}

function checkSegments(key: string): void {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH) throw refused(key, "must be 1 to 1024 characters");
  if (key.startsWith("/")) throw refused(key, "is absolute");
  if (!KEY_CHARACTERS.test(key)) throw refused(key, "has characters outside [A-Za-z0-9._/-]");
  const segments = key.split("/");
  if (segments.some((segment) => segment === "")) throw refused(key, "has an empty segment");
  if (segments.some((segment) => segment.startsWith("."))) throw refused(key, 'has a segment starting with "."');
}

/** `${cdnUrl}/${key}`; keys need no escaping (checkFile allows URL-safe characters only). */
export function publicUrl(cdnUrl: string, key: string): string {
  return `${cdnUrl.replace(/\/+$/, "")}/${key}`;
}

function refused(key: string, why: string): StorageError {
  return new StorageError(`storage key "${String(key).slice(0, 200)}" refused: it ${why}`);
}
