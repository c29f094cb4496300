import { ENDPOINT_INPUT_FIELD, MAX_MODERATION_INPUTS, type Endpoint } from "./endpoints.ts";
import type { JsonSchema, ParameterSchema } from "./model-entry.ts";

/** Request fields the catalog writes itself from the entry; `parameters` must not declare them. */
export const DERIVED_FIELDS: readonly string[] = Object.freeze(["model", "prompt", "text", "input", "size", "quality", "content_filter", "webhook_url"]);

export const WEBHOOK_URL_SCHEMA = Object.freeze({ type: "string", format: "uri", maxLength: 2048 });

export interface SchemaSource {
  id: string;
  endpoint: Endpoint;
  contentFilter: boolean;
  maxPromptLength?: number;
  sizes?: string[];
  defaultSize?: string;
  qualities?: string[];
  defaultQuality?: string;
  parameters: ParameterSchema;
}

/** The whole request body schema of one model, minus `webhook_url` (checked by the gateway). */
export function composeRequestSchema(source: SchemaSource): JsonSchema {
  const input = ENDPOINT_INPUT_FIELD[source.endpoint];
  const limit = source.maxPromptLength === undefined ? {} : { maxLength: source.maxPromptLength };
  const properties: Record<string, JsonSchema> = { model: { type: "string", const: source.id } };
  // One schema with a union type rather than anyOf, so that ajv reports only the rule that broke
  // (an over-long item is then a maxLength error, i.e. 20007, not also a type error).
  properties[input] =
    input === "input"
      ? {
          type: ["string", "array"],
          minLength: 1,
          ...limit,
          minItems: 1,
          maxItems: MAX_MODERATION_INPUTS,
          items: { type: "string", ...limit },
        }
      : { type: "string", minLength: 1, ...limit };
  if (source.sizes) properties.size = withDefault({ type: "string", enum: [...source.sizes] }, source.defaultSize);
  if (source.qualities) {
    properties.quality = withDefault({ type: "string", enum: [...source.qualities] }, source.defaultQuality);
  }
  if (source.contentFilter) properties.content_filter = { type: "boolean" };
  Object.assign(properties, structuredClone(source.parameters.properties));
  return {
    type: "object",
    additionalProperties: false,
    required: ["model", input, ...(source.parameters.required ?? [])],
    properties,
  };
}

function withDefault(schema: JsonSchema, value: string | undefined): JsonSchema {
  return value === undefined ? schema : { ...schema, default: value };
}
