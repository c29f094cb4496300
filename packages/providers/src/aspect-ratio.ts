/** "1280x720" as the ratio of its sides, written with `separator` ("16:9"); other values are kept as they are. */
export function sizeToRatio(value: unknown, separator = ":", reduce = true): unknown {
  if (typeof value !== "string") return value;
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(value);
  if (!match) return value;
  const width = Number(match[1]);
  const height = Number(match[2]);
  if (width === 0 || height === 0) return value;
  const divisor = reduce ? gcd(width, height) : 1;
  return `${width / divisor}${separator}${height / divisor}`;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}
