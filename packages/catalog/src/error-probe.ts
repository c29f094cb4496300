import type { JsonSchema, ModelEntry } from "./model-entry.ts";

/**
 * A copy of a refused body, small whatever the body's shape, on which ajv with `allErrors` finds
 * the same deciding error as on the body itself (validation-error.ts picks the earliest code, then
 * the first field of the body). Collecting every error of the body itself cost about a second for
 * a 400,000-item array or 60,000 unknown keys. Kept:
 * - every field the model knows, an array cut to one item over its `maxItems` (ajv reports
 *   `maxItems`, a 20003, before any item, and no item can rank before 20003), a string to twice its
 *   `maxLength` plus 2 UTF-16 units, still too long (ajv reports `maxLength` before `format` and
 *   `pattern`; the message reads the length from the body itself);
 * - `size` and `quality` when the model has none (20005 / 20006, not unknown fields);
 * - the first other unknown field only: its 20003 comes before those of any later field.
 */
export function errorProbe(params: Record<string, unknown>, model: ModelEntry): Record<string, unknown> {
  const properties = model.schema.properties as Record<string, JsonSchema>;
  const kept: [string, unknown][] = [];
  let unknownKept = false;
  for (const field of Object.keys(params)) {
    const value = params[field];
    if (Object.hasOwn(properties, field)) kept.push([field, bounded(value, properties[field]!)]);
    else if (field === "size" || field === "quality") kept.push([field, value]);
    else if (!unknownKept) {
      unknownKept = true;
      kept.push([field, value]);
    }
  }
  // fromEntries defines own properties: a `__proto__` field stays a field.
  return Object.fromEntries(kept);
}

/**
 * Whether the body is its own probe: every field known to the model and no value that would be
 * cut. Otherwise it is refused for sure, and ajv need not see it whole even once.
 */
export function isProbeSized(body: Record<string, unknown>, model: ModelEntry): boolean {
  const properties = model.schema.properties as Record<string, JsonSchema>;
  for (const field in body) {
    if (!Object.hasOwn(properties, field)) return false;
    const value = body[field];
    if (bounded(value, properties[field]!) !== value) return false;
  }
  return true;
}

function bounded(value: unknown, schema: JsonSchema): unknown {
  const { maxItems, maxLength } = schema;
  if (Array.isArray(value) && typeof maxItems === "number" && value.length > maxItems + 1) return value.slice(0, maxItems + 1);
  // More UTF-16 units than twice the limit is more code points than the limit.
  if (typeof value === "string" && typeof maxLength === "number" && value.length > 2 * maxLength + 2) return value.slice(0, 2 * maxLength + 2);
  return value;
}
