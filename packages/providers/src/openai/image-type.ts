import type { ProviderFile } from "../provider.ts";

type ImageType = Pick<ProviderFile, "contentType" | "extension">;

const PNG: ImageType = { contentType: "image/png", extension: "png" };
const JPEG: ImageType = { contentType: "image/jpeg", extension: "jpg" };
const WEBP: ImageType = { contentType: "image/webp", extension: "webp" };

/**
 * The image's type from its first bytes (PNG, JPEG, WebP signatures). The answer's
 * `output_format` is not trusted on its own: bytes of another kind would then be stored, and
 * served from the CDN, under an image's name. Undefined when the bytes are none of the three.
 */
export function imageType(data: Buffer): ImageType | undefined {
  if (data.length >= 8 && data.readUInt32BE(0) === 0x89504e47 && data.readUInt32BE(4) === 0x0d0a1a0a) return PNG;
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return JPEG;
  if (data.length >= 12 && data.toString("latin1", 0, 4) === "RIFF" && data.toString("latin1", 8, 12) === "WEBP") return WEBP;
  return undefined;
}
