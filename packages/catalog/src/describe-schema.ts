import type { JsonSchema } from "./model-entry.ts";

/**
 * What a parameter schema accepts, in words ("an integer between 1 and 4"), for 20003 messages.
 * Undefined when the schema is beyond these simple shapes; the caller then uses ajv's message.
 */
export function describeSchema(schema: JsonSchema): string | undefined {
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}`;
  if ("const" in schema) return `exactly ${JSON.stringify(schema.const)}`;
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) return joinAll(alternatives.map((s) => describeSchema(s as JsonSchema)));
  if (typeof schema.type === "string") return describeType(schema, schema.type);
  if (Array.isArray(schema.type)) return joinAll(schema.type.map((t) => describeType(schema, String(t))));
  return undefined;
}

function joinAll(parts: (string | undefined)[]): string | undefined {
  return parts.length > 0 && parts.every((p) => p !== undefined) ? parts.join(" or ") : undefined;
}

function describeType(schema: JsonSchema, type: string): string | undefined {
  switch (type) {
    case "boolean":
      return "a boolean";
    case "null":
      return "null";
    case "integer":
      return `an integer${range(schema)}`;
    case "number":
      return `a number${range(schema)}`;
    case "string":
      return describeString(schema);
    case "array":
      return describeArray(schema);
    default:
      return undefined;
  }
}

function num(schema: JsonSchema, keyword: string): number | undefined {
  const value = schema[keyword];
  return typeof value === "number" ? value : undefined;
}

function range(schema: JsonSchema): string {
  const min = num(schema, "minimum");
  const max = num(schema, "maximum");
  const exMin = num(schema, "exclusiveMinimum");
  const exMax = num(schema, "exclusiveMaximum");
  const parts: string[] = [];
  if (min !== undefined && max !== undefined) return ` between ${min} and ${max}`;
  if (min !== undefined) parts.push(`of at least ${min}`);
  if (exMin !== undefined) parts.push(`greater than ${exMin}`);
  if (max !== undefined) parts.push(`of at most ${max}`);
  if (exMax !== undefined) parts.push(`less than ${exMax}`);
  return parts.length > 0 ? ` ${parts.join(" and ")}` : "";
}

function describeString(schema: JsonSchema): string {
  const min = num(schema, "minLength") ?? 0;
  const max = num(schema, "maxLength");
  const format = typeof schema.format === "string" ? schema.format : undefined;
  const noun =
    format === "http-url" ? "an http(s) URL" : format === "uri" ? "an absolute URI" : format !== undefined ? `a string in ${format} format` : "a string";
  let text = noun;
  if (max !== undefined) text += min > 0 ? ` of ${min} to ${max} characters` : ` of at most ${max} characters`;
  else if (min === 1 && format === undefined) text = "a non-empty string";
  else if (min > 0) text += ` of at least ${min} characters`;
  if (typeof schema.pattern === "string") text += ` matching /${schema.pattern}/`;
  return text;
}

function describeArray(schema: JsonSchema): string | undefined {
  const min = num(schema, "minItems") ?? 0;
  const max = num(schema, "maxItems");
  const items = typeof schema.items === "object" && schema.items !== null ? describeSchema(schema.items as JsonSchema) : "";
  if (items === undefined) return undefined;
  let count = "";
  if (max !== undefined) count = min > 0 ? ` of ${min} to ${max}` : ` of at most ${max}`;
  else if (min > 0) count = ` of at least ${min}`;
  if (items === "") return count === "" ? "an array" : `an array${count} items`;
  // "a string" → "strings" reads better than ", each a string".
  const plural = /^an? (string|integer|number|boolean)$/.exec(items);
  return plural ? `an array${count} ${plural[1]}s` : `an array${count} items, each ${items}`;
}
