import type { JsonSchema, ModelEntry } from "./model-entry.ts";

/** A URL the request carries in a parameter: `field` names it as a message should (`refs[1]`, `a.b`). */
export interface UrlParameter {
  field: string;
  url: string;
}

/** Formats whose value may be an absolute URL (ajv-formats' and the catalog's own `http-url`). */
const URL_FORMATS = new Set(["http-url", "uri", "url", "uri-reference", "uri-template"]);
/** A parameter named as a URL is taken as one whatever its format says (an operator's `image_url: { type: "string" }`). */
const URL_NAME = /(^|_)urls?$/i;
const MAX_DEPTH = 32;

/** One step into a value: a member or item by name/index, or every one not named otherwise. */
type Step = { key: string } | { every: readonly string[] };

const paths = new WeakMap<JsonSchema, Step[][]>();

/**
 * Every string in `params` that the model's schema declares as a URL (any depth: properties,
 * items, tuples, additional properties, and the branches of anyOf/oneOf/allOf), found from paths
 * worked out once per model. Only values that parse as absolute URLs are returned: a string that
 * went through another branch of an anyOf is not one. The whole body goes to an HTTP upstream as
 * its input, so these are the URLs an upstream may be made to fetch.
 */
export function urlParameters(model: ModelEntry, params: Record<string, unknown>): UrlParameter[] {
  let known = paths.get(model.schema);
  if (!known) {
    known = [];
    collect(model.schema, [], known, 0);
    paths.set(model.schema, known);
  }
  const found: UrlParameter[] = [];
  for (const path of known) valuesAt(params, path, "", found);
  return found;
}

function collect(schema: unknown, path: Step[], out: Step[][], depth: number, named = false): void {
  if (!isObject(schema) || depth > MAX_DEPTH) return;
  if (named || (typeof schema.format === "string" && URL_FORMATS.has(schema.format))) out.push(path);
  const properties = isObject(schema.properties) ? schema.properties : {};
  for (const [key, sub] of Object.entries(properties)) collect(sub, [...path, { key }], out, depth + 1, URL_NAME.test(key));
  if (isObject(schema.additionalProperties)) collect(schema.additionalProperties, [...path, { every: Object.keys(properties) }], out, depth + 1);
  const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
  tuple.forEach((sub, index) => collect(sub, [...path, { key: String(index) }], out, depth + 1));
  if (isObject(schema.items)) collect(schema.items, [...path, { every: [] }], out, depth + 1);
  for (const keyword of ["anyOf", "oneOf", "allOf"]) {
    const branches = schema[keyword];
    if (Array.isArray(branches)) for (const sub of branches) collect(sub, path, out, depth + 1);
  }
}

function valuesAt(value: unknown, path: Step[], field: string, out: UrlParameter[]): void {
  const [step, ...rest] = path;
  if (!step) {
    if (typeof value === "string" && URL.canParse(value)) out.push({ field, url: value });
    return;
  }
  if (value === null || typeof value !== "object") return;
  const name = (key: string) => (Array.isArray(value) ? `${field}[${key}]` : field === "" ? key : `${field}.${key}`);
  if ("key" in step) {
    if (Object.hasOwn(value, step.key)) valuesAt((value as Record<string, unknown>)[step.key], rest, name(step.key), out);
    return;
  }
  for (const [key, member] of Object.entries(value)) if (!step.every.includes(key)) valuesAt(member, rest, name(key), out);
}

function isObject(value: unknown): value is JsonSchema {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
