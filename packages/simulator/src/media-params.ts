/** `size` as "<width>x<height>", each side 1..max; anything else gives the fallback. */
export function parseSize(value: unknown, fallback: { width: number; height: number }, max: number): { width: number; height: number } {
  if (typeof value !== "string") return fallback;
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(value);
  if (!match) return fallback;
  const width = Number(match[1]);
  const height = Number(match[2]);
  if (width < 1 || height < 1) return fallback;
  return { width: Math.min(width, max), height: Math.min(height, max) };
}

/** A whole number param clamped to [min, max]; absent or not a number gives the fallback. */
export function intParam(value: unknown, fallback: number, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(min, Math.round(value)));
}
