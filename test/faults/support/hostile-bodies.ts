import { ENDPOINT_PATHS, type Endpoint } from "@gen/catalog";

/**
 * Bodies just under the 1 MiB limit in the shapes that used to make validation expensive, with
 * the answer the contract gives each. Shared by the fuzz suite and
 * bench/validation-cost.ts; the unit tests in apps/gateway/test/validation.test.ts use them too.
 */
export interface HostileBody {
  name: string;
  endpoint: Endpoint;
  path: string;
  body: string;
  /** `status/code` */
  expect: string;
}

const LIMIT = 1024 * 1024 - 64;

/** `head` + as many `unit`s (joined by `sep`) as fit under the limit + `tail`. */
function fill(head: string, unit: (i: number) => string, sep: string, tail: string): string {
  const parts: string[] = [];
  let size = head.length + tail.length;
  for (let i = 0; ; i++) {
    const next = unit(i);
    if (size + next.length + sep.length > LIMIT) break;
    parts.push(next);
    size += next.length + sep.length;
  }
  return head + parts.join(sep) + tail;
}

/** 1,990 items joined by commas: just under MAX_BODY_ITEMS (2,000) with the few items around them. */
const wide = (unit: (i: number) => string): string => Array.from({ length: 1990 }, (_, i) => unit(i)).join(",");

const IMAGE = '{"model":"sim-image-1","prompt":"a lighthouse"';
const MODERATION = '{"model":"sim-moderation-1"';

const SHAPES: Omit<HostileBody, "path">[] = [
  { name: "moderation input: array of numbers", endpoint: "moderations", body: fill(`${MODERATION},"input":[`, () => "1", ",", "]}"), expect: "400/20003" },
  {
    name: "moderation input: array of empty arrays",
    endpoint: "moderations",
    body: fill(`${MODERATION},"input":[`, () => "[]", ",", "]}"),
    expect: "400/20003",
  },
  {
    name: "moderation input: array of short strings",
    endpoint: "moderations",
    body: fill(`${MODERATION},"input":[`, () => '"a"', ",", "]}"),
    expect: "400/20003",
  },
  {
    name: "moderation input: 32 strings of 32 KiB",
    endpoint: "moderations",
    body: `${MODERATION},"input":[${Array.from({ length: 32 }, () => `"${"a".repeat(32_000)}"`).join(",")}]}`,
    expect: "400/20007",
  },
  {
    name: "moderation input: 32 strings of 5,000 lone surrogates",
    endpoint: "moderations",
    body: `${MODERATION},"input":[${Array.from({ length: 32 }, () => `"${"\\ud800".repeat(5000)}"`).join(",")}]}`,
    expect: "400/20003",
  },
  {
    name: "moderation input: 32 strings of 9,000 escaped characters",
    endpoint: "moderations",
    body: `${MODERATION},"input":[${Array.from({ length: 32 }, () => `"${"a\\u0301".repeat(4500)}"`).join(",")}]}`,
    expect: "202",
  },
  {
    name: "moderation input: array of NUL strings",
    endpoint: "moderations",
    body: fill(`${MODERATION},"input":[`, () => '"\\u0000"', ",", "]}"),
    expect: "400/20003",
  },
  { name: "images: many unknown keys", endpoint: "images", body: fill(`${IMAGE},`, (i) => `"k${i}":1`, ",", "}"), expect: "400/20003" },
  // Over MAX_BODY_ITEMS: refused before parsing, so before the missing model is noticed.
  { name: "images: many unknown keys, model missing", endpoint: "images", body: fill('{"prompt":"a",', (i) => `"k${i}":1`, ",", "}"), expect: "400/20003" },
  {
    name: "images: 1,990 unknown keys, model missing",
    endpoint: "images",
    body: `{"prompt":"a",${wide((i) => `"${"k".repeat(500)}${i}":[]`)}}`,
    expect: "400/20002",
  },
  { name: "images: 1,990 unknown keys", endpoint: "images", body: `${IMAGE},${wide((i) => `"${"k".repeat(500)}${i}":[]`)}}`, expect: "400/20003" },
  { name: "images: 1,990 short unknown keys", endpoint: "images", body: `${IMAGE},${wide((i) => `"k${i}":1`)}}`, expect: "400/20003" },
  {
    name: "images: many unknown keys before a bad size",
    endpoint: "images",
    body: fill(`${IMAGE},`, (i) => `"k${i}":1`, ",", ',"size":"7x7"}'),
    expect: "400/20003",
  },
  { name: "images: one key repeated (duplicate keys)", endpoint: "images", body: fill(`${IMAGE},`, () => '"n":1', ",", "}"), expect: "400/20003" },
  { name: "images: one key repeated 1,990 times", endpoint: "images", body: `${IMAGE},${wide(() => `"n":${" ".repeat(500)}1`)}}`, expect: "202" },
  {
    name: "moderation input: 1,990 numbers, 1 MiB of spaces",
    endpoint: "moderations",
    body: `${MODERATION},"input":[${wide(() => `${" ".repeat(500)}1`)}]}`,
    expect: "400/20003",
  },
  {
    name: "moderation input: 1,990 strings",
    endpoint: "moderations",
    body: `${MODERATION},"input":[${wide(() => `"${"a".repeat(500)}"`)}]}`,
    expect: "400/20003",
  },
  {
    name: "images: 31 levels of nesting, 1,990 items",
    endpoint: "images",
    body: `${IMAGE},"x":${"[".repeat(30)}${wide(() => `[${" ".repeat(500)}]`)}${"]".repeat(30)}}`,
    expect: "400/20003",
  },
  { name: "images: duplicate keys, last one bad", endpoint: "images", body: fill(`${IMAGE},`, () => '"n":1', ",", ',"n":99}'), expect: "400/20003" },
  { name: "images: nested object with many keys", endpoint: "images", body: fill(`${IMAGE},"x":{`, (i) => `"k${i}":1`, ",", "}}"), expect: "400/20003" },
  {
    name: "images: deep array nesting",
    endpoint: "images",
    body: `${IMAGE},"x":${"[".repeat(LIMIT / 2 - 40)}${"]".repeat(LIMIT / 2 - 40)}}`,
    expect: "400/20003",
  },
  {
    name: "images: deep object nesting",
    endpoint: "images",
    body: `${IMAGE},"n":${'{"a":'.repeat(LIMIT / 6 - 20)}1${"}".repeat(LIMIT / 6 - 20)}}`,
    expect: "400/20003",
  },
  {
    name: "images: deep nesting in prompt",
    endpoint: "images",
    body: `{"model":"sim-image-1","prompt":${"[".repeat(LIMIT / 2 - 40)}${"]".repeat(LIMIT / 2 - 40)}}`,
    expect: "400/20003",
  },
  { name: "images: long prompt", endpoint: "images", body: `{"model":"sim-image-1","prompt":"${"a".repeat(LIMIT - 40)}"}`, expect: "400/20007" },
  {
    name: "images: long escaped prompt",
    endpoint: "images",
    body: `{"model":"sim-image-1","prompt":"${"\\ud83d\\ude00".repeat((LIMIT - 40) / 12)}"}`,
    expect: "400/20007",
  },
  {
    name: "images: long image_url",
    endpoint: "images",
    body: `${IMAGE},"image_url":"https://a.example/${"a/".repeat((LIMIT - 80) / 2)}"}`,
    expect: "400/20003",
  },
  {
    name: "images: long webhook_url",
    endpoint: "images",
    body: `${IMAGE},"webhook_url":"https://a.example/${"%20".repeat((LIMIT - 80) / 3)}"}`,
    expect: "400/20003",
  },
  { name: "images: long size", endpoint: "images", body: `${IMAGE},"size":"${"1".repeat(LIMIT - 80)}"}`, expect: "400/20005" },
  { name: "images: long model", endpoint: "images", body: `{"prompt":"a","model":"${"m".repeat(LIMIT - 40)}"}`, expect: "400/20004" },
  { name: "images: long unknown key", endpoint: "images", body: `${IMAGE},"${"k".repeat(LIMIT - 60)}":1}`, expect: "400/20003" },
  { name: "images: huge number", endpoint: "images", body: `${IMAGE},"n":${"9".repeat(LIMIT - 60)}}`, expect: "400/20003" },
  { name: "images: long fraction", endpoint: "images", body: `${IMAGE},"n":1.${"0".repeat(LIMIT - 60)}}`, expect: "202" },
  {
    name: "images: many small strings in an unknown field",
    endpoint: "images",
    body: fill(`${IMAGE},"x":[`, () => '"\\ud800"', ",", "]}"),
    expect: "400/20003",
  },
  { name: "detect: array of numbers as text", endpoint: "detect", body: fill('{"model":"sim-detect-1","text":[', () => "1", ",", "]}"), expect: "400/20003" },
];

export const HOSTILE_BODIES: readonly HostileBody[] = SHAPES.map((shape) => ({ ...shape, path: ENDPOINT_PATHS[shape.endpoint] }));
