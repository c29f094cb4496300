export interface RawUrlParts {
  /** Everything between `https://` and the first `/`, `?` or `#`. */
  authority: string;
  /** Path, query and fragment exactly as written (may be empty). */
  tail: string;
}

const PREFIX = /^https:\/\//i;

/**
 * Splits the string as written, before any normalisation, because the WHATWG parser hides what
 * the rules care about (it drops `:443`, an empty `@` and dot segments). Returns null unless the
 * string starts with `https://` followed by something other than a slash.
 */
export function splitRawUrl(raw: string): RawUrlParts | null {
  const match = PREFIX.exec(raw);
  if (!match) return null;
  const rest = raw.slice(match[0].length);
  if (rest.startsWith("/")) return null;
  const end = rest.search(/[/?#]/);
  const cut = end === -1 ? rest.length : end;
  return { authority: rest.slice(0, cut), tail: rest.slice(cut) };
}
