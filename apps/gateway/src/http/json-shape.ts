/** Deepest nesting of arrays and objects a request body may have (the top-level object is 1). */
export const MAX_BODY_DEPTH = 32;
/** Most array items and object members a request body may hold, all levels together. */
export const MAX_BODY_ITEMS = 2_000;

export type ShapeProblem = "depth" | "items";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;
const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;

// One token per match: a structural character, a run of whitespace, or a run of anything else (a
// number or a literal, in JSON). Runs match in one tight loop (a regex searching past whitespace
// was as slow as a loop over the bytes).
const TOKEN = /["[\]{},:]|[^ \t\n\r"[\]{},:]+|[ \t\n\r]+/g;
const NOT_SPACE = /[^ \t\n\r]/g;

/**
 * Which limit the JSON text breaks, or null, read before JSON.parse: parsing alone took 100 ms
 * for 1 MiB of `[[[[...`, and every later step walks what was parsed. Counts only;
 * syntax is JSON.parse's job, and where the text cannot be JSON the scan stops with null and lets
 * JSON.parse say so (it fails there, having read no more than the scan allowed). Every kind of
 * token is bounded by the item count in JSON, so the scan visits at most about 14 × MAX_BODY_ITEMS
 * tokens (whitespace between them included) and skips strings with a native search: about a
 * millisecond per MiB.
 */
export function jsonShapeProblem(text: string): ShapeProblem | null {
  let depth = 0;
  let items = 0;
  // Tokens that each belong to an item already counted (or to the top-level value).
  let strings = 0;
  let opens = 0;
  let colons = 0;
  let scalars = 0;
  // Just after `[` or `{`: the next token is the container's first item unless it closes it.
  let opened = false;
  let topLevelDone = false;
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(text); match !== null; match = TOKEN.exec(text)) {
    const char = text.charCodeAt(match.index);
    if (char === SPACE || char === TAB || char === LF || char === CR) continue;
    // A second top-level value: not JSON.
    if (topLevelDone) return null;
    if (opened) {
      opened = false;
      if (char !== CLOSE_ARRAY && char !== CLOSE_OBJECT && ++items > MAX_BODY_ITEMS) return "items";
    }
    if (char === QUOTE) {
      // Each item holds at most two strings (key and value), the top level one.
      if (++strings > 2 * items + 1) return null;
      const end = stringEnd(text, match.index);
      if (end < 0) return null;
      TOKEN.lastIndex = end + 1;
      if (depth === 0) topLevelDone = true;
    } else if (char === OPEN_ARRAY || char === OPEN_OBJECT) {
      if (++opens > items + 1) return null;
      if (++depth > MAX_BODY_DEPTH) return "depth";
      opened = true;
    } else if (char === CLOSE_ARRAY || char === CLOSE_OBJECT) {
      if (--depth < 0) return null;
      if (depth === 0) topLevelDone = true;
    } else if (char === COMMA) {
      if (++items > MAX_BODY_ITEMS) return "items";
    } else if (char === COLON) {
      if (++colons > items) return null;
    } else {
      if (++scalars > items + 1) return null;
      if (depth === 0) topLevelDone = true;
    }
  }
  return null;
}

/** Whether the first token of the JSON text opens an object. */
export function startsAsObject(text: string): boolean {
  NOT_SPACE.lastIndex = 0;
  const first = NOT_SPACE.exec(text);
  return first !== null && first[0].charCodeAt(0) === OPEN_OBJECT;
}

/** Index of the quote closing the string opened at `start`, or -1 when it is never closed. */
function stringEnd(text: string, start: number): number {
  for (let at = start + 1; ; at++) {
    at = text.indexOf('"', at);
    if (at < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}
