// PostgreSQL's text and jsonb can hold neither NUL nor an unpaired UTF-16 surrogate, yet JSON.parse
// lets both through (`"\u0000"`, `"\ud800"`). With the `u` flag a surrogate range matches only
// unpaired ones: a well-formed pair is one code point.
const LONE_SURROGATE = /[\ud800-\udfff]/u;
export const unstorable = (text: string): boolean => text.includes("\0") || LONE_SURROGATE.test(text);

/**
 * The first top-level field whose value (at any depth, keys included) holds text the database
 * cannot store, or null. Such a body used to reach the insert and fail there as 60001.
 */
export function unstorableField(params: Record<string, unknown>): string | null {
  for (const [field, value] of Object.entries(params)) {
    if (unstorable(field) || holdsUnstorable(value)) return field;
  }
  return null;
}

function holdsUnstorable(value: unknown): boolean {
  if (typeof value === "string") return unstorable(value);
  if (Array.isArray(value)) return value.some(holdsUnstorable);
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).some(([key, inner]) => unstorable(key) || holdsUnstorable(inner));
  }
  return false;
}
