/** Most characters of user input that an error message repeats. */
const ECHO_LIMIT = 100;

const PLAIN_NAME = /^[A-Za-z0-9_.:-]+$/;

const SURROGATE = /[\ud800-\udfff]/;

/** Length in Unicode code points (an emoji counts once, as users count it). */
export function codePointLength(text: string): number {
  // Strings may be 1 MiB long: a native scan first, and no string per character (for...of took
  // 14 ms on 1 MiB); a high surrogate followed by a low one is one code point, as for...of counts.
  if (!SURROGATE.test(text)) return text.length;
  let length = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length--;
        i++;
      }
    }
  }
  return length;
}

function truncate(text: string): string {
  // Cheap exit first: the body may hold strings of up to 1 MiB.
  if (text.length <= ECHO_LIMIT) return text;
  let out = "";
  let count = 0;
  for (const char of text) {
    if (count++ === ECHO_LIMIT) return `${out}…`;
    out += char;
  }
  return out;
}

/** A user-supplied string as JSON (quotes and escapes), cut to ECHO_LIMIT code points. */
export function quote(text: string): string {
  return JSON.stringify(truncate(text));
}

/** A user-supplied field name: bare when it is a plain identifier, quoted otherwise. */
export function fieldName(name: string): string {
  return name.length <= ECHO_LIMIT && PLAIN_NAME.test(name) ? name : quote(name);
}

/** What kind of JSON value the user sent, for messages about non-string values. */
export function jsonKind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "number" || typeof value === "boolean") return `${typeof value} ${String(value)}`;
  return typeof value;
}
