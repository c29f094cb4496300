/** "1280x720" as the ratio of its sides, written with `separator`; other values are kept as they are. */
export function sizeToRatio(value: unknown, separator = ":", reduce = true): unknown {
  const sides = sidesOf(value);
  if (!sides) return value;
  const [width, height] = sides;
  const divisor = reduce ? gcd(width, height) : 1;
  return `${width / divisor}${separator}${height / divisor}`;
}

// The aspect ratios image and video models take (FLUX, Imagen, Kling, ...).
const COMMON_RATIOS: ReadonlyArray<[number, number]> = [
  [1, 1],
  [16, 9],
  [9, 16],
  [21, 9],
  [9, 21],
  [3, 2],
  [2, 3],
  [4, 3],
  [3, 4],
  [5, 4],
  [4, 5],
];
const SNAP_TOLERANCE = 0.03;

/**
 * "1344x768" as the common aspect ratio nearest to it ("16:9") when one is within 3 %, since
 * models take a short list of ratios and sizes are often rounded to multiples of 64; otherwise
 * the exact reduced ratio. Other values are kept as they are.
 */
export function sizeToCommonRatio(value: unknown): unknown {
  const sides = sidesOf(value);
  if (!sides) return value;
  const target = Math.log(sides[0] / sides[1]);
  let best: [number, number] | undefined;
  let bestDistance = Infinity;
  for (const ratio of COMMON_RATIOS) {
    const distance = Math.abs(Math.log(ratio[0] / ratio[1]) - target);
    if (distance < bestDistance) [best, bestDistance] = [ratio, distance];
  }
  return best && bestDistance <= Math.log(1 + SNAP_TOLERANCE) ? `${best[0]}:${best[1]}` : sizeToRatio(value);
}

function sidesOf(value: unknown): [number, number] | undefined {
  if (typeof value !== "string") return undefined;
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(value);
  if (!match) return undefined;
  const width = Number(match[1]);
  const height = Number(match[2]);
  return width === 0 || height === 0 ? undefined : [width, height];
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}
