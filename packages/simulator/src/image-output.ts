import { intParam, parseSize } from "./media-params.ts";
import { encodePng } from "./png.ts";
import type { ProviderFile } from "@gen/providers";
import type { Random } from "./seeded-random.ts";

const DEFAULT_IMAGE_SIZE = { width: 256, height: 256 };
// Big enough for every catalog size, small enough that a typo cannot make a gigapixel image.
const MAX_IMAGE_SIDE = 2048;
const MAX_IMAGES = 10;

function colour(random: Random): [number, number, number] {
  return [random.int(0, 255), random.int(0, 255), random.int(0, 255)];
}

/** One picture: a diagonal gradient between two colours, stripes, and a disc. */
function renderImage(width: number, height: number, random: Random): Buffer {
  const from = colour(random);
  const to = colour(random);
  const ink = colour(random);
  const period = random.int(8, 48);
  const angle = random.next() < 0.5 ? 1 : -1;
  const cx = random.next() * width;
  const cy = random.next() * height;
  const r2 = (Math.min(width, height) * (0.15 + random.next() * 0.25)) ** 2;
  const rgb = Buffer.alloc(width * height * 3);
  const [r0, g0, b0] = from;
  const [dr, dg, db] = [to[0] - r0, to[1] - g0, to[2] - b0];
  let i = 0;
  for (let y = 0; y < height; y++) {
    const ty = y / height / 2;
    const dy2 = (y - cy) ** 2;
    for (let x = 0; x < width; x++) {
      if ((x - cx) ** 2 + dy2 <= r2) {
        rgb[i++] = ink[0];
        rgb[i++] = ink[1];
        rgb[i++] = ink[2];
        continue;
      }
      const t = x / width / 2 + ty;
      const shade = Math.floor((x + angle * y + height) / period) & 1 ? 0.8 : 1;
      rgb[i++] = (r0 + dr * t) * shade;
      rgb[i++] = (g0 + dg * t) * shade;
      rgb[i++] = (b0 + db * t) * shade;
    }
  }
  return encodePng(width, height, rgb);
}

export function simulateImages(params: Record<string, unknown>, random: Random): ProviderFile[] {
  const { width, height } = parseSize(params.size, DEFAULT_IMAGE_SIZE, MAX_IMAGE_SIDE);
  const count = intParam(params.n, 1, 1, MAX_IMAGES);
  return Array.from({ length: count }, () => ({ contentType: "image/png", extension: "png", data: renderImage(width, height, random) }));
}

/** Token usage of an image job: prompt characters / 4 in, a 32 × 32 patch per token out. */
export function imageTokens(params: Record<string, unknown>, prompt: string): { input: number; output: number } {
  const { width, height } = parseSize(params.size, DEFAULT_IMAGE_SIZE, MAX_IMAGE_SIDE);
  const count = intParam(params.n, 1, 1, MAX_IMAGES);
  const quality = params.quality === "hd" ? 2 : 1;
  return {
    input: Math.max(1, Math.ceil([...prompt].length / 4)),
    output: count * Math.ceil((width * height) / 1024) * quality,
  };
}
