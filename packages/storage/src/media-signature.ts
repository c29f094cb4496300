import { extensionFor, type MediaExtension } from "./media-types.ts";

const ascii = (text: string) => Buffer.from(text, "latin1");
const startsWith = (data: Buffer, prefix: Buffer, offset = 0) =>
  data.length >= offset + prefix.length && data.subarray(offset, offset + prefix.length).equals(prefix);
const utf8 = new TextDecoder("utf-8", { fatal: true });

function isUtf8Text(data: Buffer): string | undefined {
  if (data.includes(0)) return undefined;
  try {
    return utf8.decode(data);
  } catch {
    return undefined;
  }
}

// The container signatures (magic numbers) of every type the service stores.
const CHECKS: Record<MediaExtension, (data: Buffer) => boolean> = {
  png: (d) => startsWith(d, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  jpg: (d) => startsWith(d, Buffer.from([0xff, 0xd8, 0xff])),
  webp: (d) => startsWith(d, ascii("RIFF")) && startsWith(d, ascii("WEBP"), 8),
  gif: (d) => startsWith(d, ascii("GIF87a")) || startsWith(d, ascii("GIF89a")),
  // ISO base media: the first box is `ftyp` (its size comes first).
  mp4: (d) => startsWith(d, ascii("ftyp"), 4),
  webm: (d) => startsWith(d, Buffer.from([0x1a, 0x45, 0xdf, 0xa3])),
  wav: (d) => startsWith(d, ascii("RIFF")) && startsWith(d, ascii("WAVE"), 8),
  // An ID3 tag, or straight into an MPEG audio frame (11 sync bits).
  mp3: (d) => startsWith(d, ascii("ID3")) || (d.length >= 2 && d[0] === 0xff && ((d[1] ?? 0) & 0xe0) === 0xe0),
  ogg: (d) => startsWith(d, ascii("OggS")),
  json: (d) => {
    const text = isUtf8Text(d);
    if (text === undefined) return false;
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  },
  txt: (d) => isUtf8Text(d) !== undefined,
};

/**
 * Whether `data` really is what `contentType` declares: media by its magic number, JSON by
 * parsing, text/plain as UTF-8 without NUL. False for a type the service does not store. An
 * upstream's label is not trusted: the bytes end up on our CDN origin under our name.
 */
export function bytesMatchType(contentType: string, data: Buffer): boolean {
  const extension = extensionFor(contentType);
  return extension !== undefined && CHECKS[extension](data);
}
