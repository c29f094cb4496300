import { MAX_BODY_DEPTH, MAX_BODY_ITEMS, jsonShapeProblem, startsAsObject } from "../src/http/json-shape.ts";
import { prng } from "../../../test/support/prng.ts";

const scan = (text: string) => jsonShapeProblem(text);

/** The reference: depth and item count of the parsed value (the top-level value is not an item). */
function measure(value: unknown, level = 1): { depth: number; items: number } {
  if (typeof value !== "object" || value === null) return { depth: level - 1, items: 0 };
  const children = Array.isArray(value) ? value : Object.values(value);
  let depth = level;
  let items = children.length;
  for (const child of children) {
    const inner = measure(child, level + 1);
    depth = Math.max(depth, inner.depth);
    items += inner.items;
  }
  return { depth, items };
}

describe("jsonShapeProblem", () => {
  it.each([
    ["{}", null],
    ['{"a":1}', null],
    ["  {  }  ", null],
    ['{"a":[],"b":{},"c":[[],[[]]],"d":" [{,\\"]} "}', null],
    ['{"s":"\\\\","t":"\\\\\\"]]]]"}', null],
    [`{"x":${"[".repeat(MAX_BODY_DEPTH - 1)}${"]".repeat(MAX_BODY_DEPTH - 1)}}`, null],
    [`{"x":${"[".repeat(MAX_BODY_DEPTH)}${"]".repeat(MAX_BODY_DEPTH)}}`, "depth"],
    [`{"x":[${Array.from({ length: MAX_BODY_ITEMS - 1 }, () => " 1 ").join(",")}]}`, null],
    [`{"x":[${Array.from({ length: MAX_BODY_ITEMS }, () => "1").join(",")}]}`, "items"],
    [`{"x":[${Array.from({ length: MAX_BODY_ITEMS }, () => "[]").join(",")}]}`, "items"],
    [`{${Array.from({ length: MAX_BODY_ITEMS + 1 }, (_, i) => `"k${i}":{}`).join(",")}}`, "items"],
    // Not JSON: left to JSON.parse (20001), whatever the counts would say.
    ['{"a":1}]]]]]]]]', null],
    ['{"a":1}{"b":2}', null],
    [`{"a":${'""'.repeat(100_000)}}`, null],
    [`{"a":${"[]".repeat(100_000)}}`, null],
    ['{"a":"unterminated', null],
    ["]]]]", null],
  ] as const)("%s", (text, expected) => expect(scan(text)).toBe(expected));

  it("agrees with the parsed value on 2,000 random documents", () => {
    const random = prng(7);
    // Each document gets a budget of values, so that sizes stay near the limits, not beyond.
    let budget = 0;
    const make = (level: number): unknown => {
      const kind = --budget < 0 ? 1 : Math.floor(random() * (level > 40 ? 4 : 6));
      if (kind === 0) return random() < 0.5 ? `s"\\[{,${Math.floor(random() * 9)}` : "";
      if (kind === 1) return Math.floor(random() * 1e6) / 7;
      if (kind === 2) return random() < 0.5 ? null : true;
      if (kind === 3) return [];
      const width = Math.floor(random() * (random() < 0.1 ? 300 : 6));
      const children = Array.from({ length: width }, () => make(level + 1));
      return kind === 4 ? children : Object.fromEntries(children.map((child, i) => [`k${i}[,"`, child]));
    };
    const wrong: string[] = [];
    const seen = { depth: 0, items: 0, neither: 0 };
    for (let i = 0; i < 2000; i++) {
      budget = Math.floor(random() * 2 * MAX_BODY_ITEMS);
      // A third of them also carry a flat list around the item limit.
      const list = random() < 0.33 ? Array.from({ length: Math.floor(random() * 2 * MAX_BODY_ITEMS) }, (_, i) => i) : [];
      const value = { root: make(2), list };
      const text = JSON.stringify(value, null, random() < 0.3 ? 2 : undefined);
      const { depth, items } = measure(value);
      const over = depth > MAX_BODY_DEPTH || items > MAX_BODY_ITEMS;
      seen[depth > MAX_BODY_DEPTH ? "depth" : items > MAX_BODY_ITEMS ? "items" : "neither"]++;
      const got = scan(text);
      if ((got !== null) !== over || (got === "depth" && depth <= MAX_BODY_DEPTH) || (got === "items" && items <= MAX_BODY_ITEMS)) {
        wrong.push(`depth ${depth}, items ${items}: ${got}`);
      }
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    // The documents fall on both sides of both limits.
    expect(Math.min(seen.depth, seen.items, seen.neither)).toBeGreaterThan(100);
  });
});

describe("startsAsObject", () => {
  it.each([
    ["{", true],
    [" \n\t\r{", true],
    [`${" ".repeat(100_000)}{`, true],
    ["[{", false],
    ["", false],
    ["\ufeff{", false],
  ] as const)("%j", (text, expected) => expect(startsAsObject(text)).toBe(expected));
});
