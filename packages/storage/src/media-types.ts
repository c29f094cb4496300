// The only media the service stores. Anything else (e.g. the simulated provider's
// "fail-storage" extension, which asks for 80005) is refused by every backend.
const CANONICAL_TYPE = {
  png: "image/png",
  jpg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
  mp4: "video/mp4",
  webm: "video/webm",
  wav: "audio/wav",
  mp3: "audio/mpeg",
  ogg: "audio/ogg",
  json: "application/json",
  txt: "text/plain; charset=utf-8",
} as const;

export type MediaExtension = keyof typeof CANONICAL_TYPE;

// Upstreams spell some types several ways; each spelling maps to one extension.
const EXTENSION_BY_TYPE: Readonly<Record<string, MediaExtension>> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/jpg": "jpg",
  "image/pjpeg": "jpg",
  "image/webp": "webp",
  "image/gif": "gif",
  "video/mp4": "mp4",
  "video/webm": "webm",
  "audio/webm": "webm",
  "audio/wav": "wav",
  "audio/wave": "wav",
  "audio/x-wav": "wav",
  "audio/vnd.wave": "wav",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3",
  "audio/ogg": "ogg",
  "application/ogg": "ogg",
  "application/json": "json",
  "text/plain": "txt",
};

/** The file extension for a Content-Type value (parameters and case ignored), or undefined when not allowed. */
export function extensionFor(contentType: string): MediaExtension | undefined {
  const essence = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  return Object.hasOwn(EXTENSION_BY_TYPE, essence) ? EXTENSION_BY_TYPE[essence] : undefined;
}

export function isMediaExtension(value: string): value is MediaExtension {
  return Object.hasOwn(CANONICAL_TYPE, value);
}

/** One type per extension, so both backends serve a file with the same Content-Type. */
export function canonicalType(extension: MediaExtension): string {
  return CANONICAL_TYPE[extension];
}
