/** Deepest nesting of arrays and objects a request body may have (the top-level object is 1). */
export const MAX_BODY_DEPTH = 32;
/** Most array items and object members a request body may hold, all levels together. */
export const MAX_BODY_ITEMS = 2_000;

export type ShapeProblem = "depth" | "items";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;

// What each byte is to the scan; one table read per byte keeps 1 MiB of digits near a millisecond.
const OTHER = 0;
const SPACE = 1;
const STRING = 2;
const OPEN = 3;
const CLOSE = 4;
const COMMA = 5;
const CLASS = new Uint8Array(256);
for (const byte of [0x20, 0x09, 0x0a, 0x0d]) CLASS[byte] = SPACE;
CLASS[QUOTE] = STRING;
CLASS[0x5b] = OPEN;
CLASS[OPEN_OBJECT] = OPEN;
CLASS[0x5d] = CLOSE;
CLASS[0x7d] = CLOSE;
CLASS[0x2c] = COMMA;

/**
 * Which limit the JSON text breaks, or null, read from the bytes before JSON.parse: parsing alone
 * took 100 ms for 1 MiB of `[[[[...`, and every later step walks what was parsed (issue 10 §1).
 * Counts only; syntax is JSON.parse's job (unbalanced brackets just count as they come). One
 * pass, and strings are skipped with a native search, so a 1 MiB body costs about a millisecond.
 */
export function jsonShapeProblem(bytes: Uint8Array): ShapeProblem | null {
  let depth = 0;
  let items = 0;
  // Just after `[` or `{`: the next token is the container's first item unless it closes it.
  let opened = false;
  for (let i = 0; i < bytes.length; i++) {
    const kind = CLASS[bytes[i]!]!;
    if (kind === OTHER || kind === SPACE) {
      if (kind === OTHER && opened) {
        opened = false;
        if (++items > MAX_BODY_ITEMS) return "items";
      }
      continue;
    }
    if (opened) {
      opened = false;
      if (kind !== CLOSE && ++items > MAX_BODY_ITEMS) return "items";
    }
    if (kind === STRING) {
      const end = stringEnd(bytes, i);
      if (end < 0) return null;
      i = end;
    } else if (kind === OPEN) {
      if (++depth > MAX_BODY_DEPTH) return "depth";
      opened = true;
    } else if (kind === CLOSE) {
      depth--;
    } else if (++items > MAX_BODY_ITEMS) {
      return "items";
    }
  }
  return null;
}

/** Whether the first token of the JSON text opens an object. */
export function startsAsObject(bytes: Uint8Array): boolean {
  for (const byte of bytes) {
    if (CLASS[byte] !== SPACE) return byte === OPEN_OBJECT;
  }
  return false;
}

/** Index of the quote closing the string opened at `start`, or -1 when it is never closed. */
function stringEnd(bytes: Uint8Array, start: number): number {
  // `"` and `\` never occur inside a multi-byte UTF-8 sequence, so bytes are as good as characters.
  for (let at = start + 1; ; at++) {
    at = bytes.indexOf(QUOTE, at);
    if (at < 0) return -1;
    let backslashes = 0;
    while (bytes[at - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}
