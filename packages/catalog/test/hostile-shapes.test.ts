import { ApiError } from "@gen/errors";
import { createCatalog, loadCatalog, type Catalog, type Endpoint } from "@gen/catalog";
import { createAjv } from "../src/create-ajv.ts";
import { validationError } from "../src/validation-error.ts";
import { prng } from "../../../test/support/prng.ts";
import { entry } from "./temp-catalog.ts";

// Bodies whose shape used to make validation cost about a second (ajv collected every
// error, then each was classified). The answer must be the one the rules give, found without
// visiting every item; timing is the benchmark's business (bench/validation-cost.ts).
const catalog = loadCatalog();

function answer(endpoint: Endpoint, body: Record<string, unknown>, from: Catalog = catalog): string {
  try {
    from.validate(endpoint, body);
    return "accepted";
  } catch (error) {
    if (error instanceof ApiError) return `${error.code} ${error.message}`;
    throw error;
  }
}

const many = <T>(count: number, make: (i: number) => T): T[] => Array.from({ length: count }, (_, i) => make(i));
const keys = (count: number, value: unknown = 1) => Object.fromEntries(many(count, (i) => [`k${i}`, value]));
const nested = (depth: number): unknown => {
  let value: unknown = [];
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};

const INPUT = "Invalid value for input: must be a string of 1 to 10000 characters or an array of 1 to 32 items, each a string of at most 10000 characters";
const moderation = (input: unknown, extra: Record<string, unknown> = {}) => ({ model: "sim-moderation-1", input, ...extra });
const image = (extra: Record<string, unknown> = {}) => ({ model: "sim-image-1", prompt: "a red fox", ...extra });

describe("hostile shapes get the documented answer", () => {
  const cases: [string, Endpoint, Record<string, unknown>, string][] = [
    ["400,000 numbers as moderation input", "moderations", moderation(many(400_000, () => 1)), `20003 ${INPUT}`],
    ["400,000 empty arrays as moderation input", "moderations", moderation(many(400_000, () => [])), `20003 ${INPUT}`],
    ["400,000 short strings as moderation input", "moderations", moderation(many(400_000, () => "a")), `20003 ${INPUT}`],
    ["an over-long first item, then 100,000 numbers", "moderations", moderation(["a".repeat(10_001), ...many(100_000, () => 1)]), `20003 ${INPUT}`],
    ["33 items, the last one too long", "moderations", moderation([...many(32, () => "a"), "a".repeat(10_001)]), `20003 ${INPUT}`],
    ["60,000 unknown keys", "images", image(keys(60_000)), "20003 Unknown parameter: k0"],
    ["60,000 unknown keys after a bad size", "images", { ...image({ size: "9x9" }), ...keys(60_000) }, "20003 Unknown parameter: k0"],
    ["a bad n before 60,000 unknown keys", "images", { ...image({ n: 99 }), ...keys(60_000) }, "20003 Invalid value for n: must be an integer between 1 and 4"],
    [
      "60,000 unknown keys, then size and quality on a model without them",
      "audio",
      { model: "sim-audio-1", prompt: "x", ...keys(60_000), size: "1", quality: "2" },
      "20003 Unknown parameter: k0",
    ],
    [
      "60,000 unknown keys holding big arrays",
      "images",
      image(
        keys(
          60_000,
          many(10, () => 1),
        ),
      ),
      "20003 Unknown parameter: k0",
    ],
    ["an object of 60,000 keys in a known field", "images", image({ n: keys(60_000) }), "20003 Invalid value for n: must be an integer between 1 and 4"],
    ["100,000 levels of nesting in an unknown field", "images", image({ x: nested(100_000) }), "20003 Unknown parameter: x"],
    [
      "100,000 levels of nesting as the prompt",
      "images",
      { model: "sim-image-1", prompt: nested(100_000) },
      "20003 Invalid value for prompt: must be a string of 1 to 4000 characters",
    ],
    ["100,000 levels of nesting as moderation input", "moderations", moderation(nested(100_000)), `20003 ${INPUT}`],
    [
      "a 1 MiB prompt",
      "images",
      { model: "sim-image-1", prompt: "a".repeat(1 << 20) },
      `20007 prompt exceeds the maximum length of 4000 characters (Unicode code points) for model sim-image-1; got ${1 << 20}`,
    ],
    [
      "a 1 MiB prompt of emoji",
      "images",
      { model: "sim-image-1", prompt: "🦊".repeat(1 << 18) },
      `20007 prompt exceeds the maximum length of 4000 characters (Unicode code points) for model sim-image-1; got ${1 << 18}`,
    ],
    [
      "a 1 MiB image_url",
      "images",
      image({ image_url: `https://example.com/${"a/".repeat(1 << 19)}` }),
      "20003 Invalid value for image_url: must be an http(s) URL of at most 2048 characters",
    ],
    [
      "a 1 MiB size",
      "images",
      image({ size: "1".repeat(1 << 20) }),
      `20005 Size "${"1".repeat(100)}…" is not supported by model sim-image-1; supported sizes: 256x256, 512x512, 1024x1024`,
    ],
    ["a 1 MiB unknown key", "images", image({ ["k".repeat(1 << 20)]: 1 }), `20003 Unknown parameter: "${"k".repeat(100)}…"`],
    ["a huge number", "images", image({ n: 1e308 }), "20003 Invalid value for n: must be an integer between 1 and 4"],
    ["infinity (1e400 parses to it)", "images", image({ n: JSON.parse("1e400") as number }), "20003 Invalid value for n: must be an integer between 1 and 4"],
    [
      "400,000 numbers as detect text",
      "detect",
      { model: "sim-detect-1", text: many(400_000, () => 1) },
      "20003 Invalid value for text: must be a string of 1 to 20000 characters",
    ],
  ];
  it.each(cases)("%s", (_label, endpoint, body, expected) => expect(answer(endpoint, body)).toBe(expected));

  it("still accepts a valid body that has had duplicate keys collapsed by JSON.parse", () => {
    const text = `{"model":"sim-image-1","prompt":"x",${many(50_000, () => '"n":1').join(",")}}`;
    expect(answer("images", JSON.parse(text) as Record<string, unknown>)).toBe("accepted");
  });

  describe("in an operator's catalog", () => {
    const custom = createCatalog({
      models: [
        entry({
          id: "rich",
          sizes: ["1x1"],
          parameters: {
            type: "object",
            required: ["seed"],
            properties: {
              seed: { type: "integer" },
              tags: { type: "array", maxItems: 3, items: { type: "string", maxLength: 5 } },
              weights: { type: "array", items: { type: "number" } },
            },
          },
        }),
      ],
    });
    const rich = (extra: Record<string, unknown>) => ({ model: "rich", prompt: "x", seed: 1, ...extra });

    it.each([
      ["60,000 unknown keys without a required parameter", { model: "rich", prompt: "x", ...keys(60_000) }, "20002 Missing required parameter: seed"],
      [
        "400,000 tags",
        rich({ tags: many(400_000, () => 1) }),
        "20003 Invalid value for tags: must be an array of at most 3 items, each a string of at most 5 characters",
      ],
      [
        "an unbounded array with one bad number among 100,000",
        rich({ weights: [...many(100_000, () => 1), "x"] }),
        "20003 Invalid value for weights: must be an array numbers",
      ],
    ] as const)("%s", (_label, body, expected) => expect(answer("images", body, custom)).toBe(expected));
  });
});

describe("the bounded explanation agrees with collecting every error", () => {
  // The reference is the former algorithm: every error of the whole body, then the earliest code.
  const ajv = createAjv();
  const reference = (endpoint: Endpoint, body: Record<string, unknown>): string => {
    const model = catalog.modelsFor(endpoint).find((m) => m.id === body.model)!;
    const check = ajv.compile(model.schema);
    const params = { ...body };
    if (check(params)) return "accepted";
    const error = validationError(check.errors ?? [], model, params);
    return `${error.code} ${error.message}`;
  };

  // Seeded: the same bodies on every run.
  const random = prng(20261123);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const VALUES: unknown[] = [
    1,
    2,
    4,
    5,
    0,
    1.5,
    -1,
    "1",
    "",
    "x",
    "a".repeat(4001),
    "a".repeat(10_001),
    "256x256",
    "9x9",
    "hd",
    "ultra",
    "https://e.com/a",
    "ftp://e",
    null,
    true,
    "a".repeat(50_000),
    `https://e.com/${"a".repeat(5000)}`,
    `ftp://e.com/${"a".repeat(5000)}`,
    "🦊".repeat(30_000),
    many(100, () => "a"),
    many(100, () => 1),
    [],
    ["a"],
    ["a", 1],
    many(33, () => "a"),
    ["a".repeat(10_001), "b"],
    ["a".repeat(10_001), 1],
    {},
    { a: 1 },
  ];
  const FIELDS = [
    "prompt",
    "text",
    "input",
    "n",
    "size",
    "quality",
    "content_filter",
    "image_url",
    "duration_seconds",
    "voice",
    "max_words",
    "foo",
    "bar",
    "__proto__",
  ];
  const MODELS: [Endpoint, string, string][] = [
    ["images", "sim-image-1", "prompt"],
    ["images", "upstream-image-1", "prompt"],
    ["videos", "sim-video-1", "prompt"],
    ["audio", "sim-audio-1", "prompt"],
    ["detect", "sim-detect-1", "text"],
    ["essay", "sim-essay-1", "prompt"],
    ["moderations", "sim-moderation-1", "input"],
  ];

  it("on 3,000 random bodies of ordinary mistakes", () => {
    const disagreements: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const [endpoint, model, input] = pick(MODELS);
      const body: Record<string, unknown> = { model, [input]: pick(["x", ["x"], "a".repeat(3000)]) };
      for (let f = 0, n = 1 + Math.floor(random() * 5); f < n; f++)
        Object.defineProperty(body, pick(FIELDS), { value: pick(VALUES), enumerable: true, configurable: true, writable: true });
      const ours = answer(endpoint, body);
      const theirs = reference(endpoint, body);
      if (ours !== theirs) disagreements.push(`${JSON.stringify(body).slice(0, 200)}: ${ours.slice(0, 120)} vs ${theirs.slice(0, 120)}`);
    }
    expect(disagreements.slice(0, 10)).toEqual([]);
  });
});
