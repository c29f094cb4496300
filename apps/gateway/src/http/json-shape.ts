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

// Native searches: from one structural character to the next, and for the first non-space.
const STRUCTURAL = /["[\]{},]/g;
const NOT_SPACE = /[^ \t\n\r]/g;

/**
 * Which limit the JSON text breaks, or null, read before JSON.parse: parsing alone took 100 ms
 * for 1 MiB of `[[[[...`, and every later step walks what was parsed (issue 10 §1). Counts only;
 * syntax is JSON.parse's job, and where the text cannot be JSON the scan stops with null and lets
 * JSON.parse say so (it fails there, having read no more than the scan allowed). Runs between
 * structural characters are skipped natively and only about 5 × MAX_BODY_ITEMS structural
 * characters are ever visited, so no shape of 1 MiB costs more than about a millisecond.
 */
export function jsonShapeProblem(bytes: Buffer): ShapeProblem | null {
  // `"` and `\` never occur inside a multi-byte UTF-8 sequence: one char per byte is enough.
  const text = bytes.toString("latin1");
  let depth = 0;
  let items = 0;
  let strings = 0;
  let opens = 0;
  // Just after `[` or `{`: the next token is the container's first item unless it closes it.
  let opened = false;
  let topLevelDone = false;
  let from = 0;
  STRUCTURAL.lastIndex = 0;
  for (let match = STRUCTURAL.exec(text); match !== null; match = STRUCTURAL.exec(text)) {
    const at = match.index;
    // A second top-level value: not JSON.
    if (topLevelDone) return null;
    const char = text.charCodeAt(at);
    if (opened) {
      opened = false;
      const empty = (char === CLOSE_ARRAY || char === CLOSE_OBJECT) && !valueBetween(text, from, at);
      if (!empty && ++items > MAX_BODY_ITEMS) return "items";
    }
    from = at + 1;
    if (char === QUOTE) {
      // Every string is a key or a value, and every item was counted when it began.
      if (++strings > 2 * items + 2) return null;
      const end = stringEnd(text, at);
      if (end < 0) return null;
      from = end + 1;
      STRUCTURAL.lastIndex = from;
      if (depth === 0) topLevelDone = true;
    } else if (char === OPEN_ARRAY || char === OPEN_OBJECT) {
      // Every container but the top-level one is an item, counted when it began.
      if (++opens > items + 1) return null;
      if (++depth > MAX_BODY_DEPTH) return "depth";
      opened = true;
    } else if (char === CLOSE_ARRAY || char === CLOSE_OBJECT) {
      if (--depth < 0) return null;
      if (depth === 0) topLevelDone = true;
    } else if (char === COMMA && ++items > MAX_BODY_ITEMS) {
      return "items";
    }
  }
  return null;
}

/** Whether the first token of the JSON text opens an object. */
export function startsAsObject(bytes: Buffer): boolean {
  NOT_SPACE.lastIndex = 0;
  const first = NOT_SPACE.exec(bytes.toString("latin1"));
  return first !== null && first[0].charCodeAt(0) === OPEN_OBJECT;
}

/** Whether text[from, to) holds a token (a number or a literal), not just whitespace. */
function valueBetween(text: string, from: number, to: number): boolean {
  if (from >= to) return false;
  NOT_SPACE.lastIndex = from;
  const found = NOT_SPACE.exec(text);
  return found !== null && found.index < to;
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
