import { PROVIDER_KINDS } from "@gen/domain";
import { ENDPOINTS } from "./endpoints.ts";

const nonNegative = { type: "number", minimum: 0 } as const;
const paramName = { type: "string", pattern: "^[A-Za-z_][A-Za-z0-9_]{0,63}$" } as const;
const optionList = {
  type: "array",
  minItems: 1,
  uniqueItems: true,
  items: { type: "string", minLength: 1, maxLength: 100 },
} as const;

const provider = { enum: [...PROVIDER_KINDS] } as const;
const upstreamModel = { type: "string", minLength: 1, maxLength: 200 } as const;
const upstreamUrl = { type: "string", format: "http-url" } as const;
const maxConcurrency = { type: "integer", minimum: 1 } as const;

/** A further upstream tried at submit when the ones before it are unavailable (README "Routes and fallbacks"). */
const upstreamInput = { type: "object" } as const;
const upstreamInputMap = {
  type: "object",
  propertyNames: paramName,
  additionalProperties: { anyOf: [{ type: "string", minLength: 1, maxLength: 100 }, { type: "null" }] },
} as const;

const fallback = {
  type: "object",
  required: ["provider", "upstreamModel"],
  additionalProperties: false,
  properties: { provider, upstreamModel, upstreamUrl, maxConcurrency, upstreamInput, upstreamInputMap },
} as const;

const pricingFormula = {
  credits: nonNegative,
  units: {
    type: "array",
    items: {
      anyOf: [
        paramName,
        {
          type: "object",
          required: ["param", "per"],
          additionalProperties: false,
          properties: { param: paramName, per: { type: "number", exclusiveMinimum: 0 } },
        },
      ],
    },
  },
  multipliers: {
    type: "object",
    propertyNames: paramName,
    additionalProperties: { type: "object", additionalProperties: nonNegative },
  },
} as const;

/**
 * JSON Schema of the catalog file (README "Catalog format"). Rules that span fields (unique ids,
 * defaults among the options, reserved parameter names) are checked after it, in build-entry.ts.
 */
export const catalogSchema = {
  $id: "https://gen.invalid/schemas/model-catalog.json",
  type: "object",
  required: ["models"],
  additionalProperties: false,
  properties: {
    $schema: { type: "string" },
    description: { type: "string" },
    models: {
      type: "array",
      items: {
        type: "object",
        required: ["id", "endpoint", "provider", "moderationRefund"],
        additionalProperties: false,
        properties: {
          id: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$" },
          endpoint: { enum: [...ENDPOINTS] },
          provider,
          description: { type: "string" },
          contentFilter: { type: "boolean" },
          maxPromptLength: { type: "integer", minimum: 1 },
          sizes: optionList,
          defaultSize: { type: "string" },
          qualities: optionList,
          defaultQuality: { type: "string" },
          pricing: {
            type: "object",
            required: ["method", "credits"],
            additionalProperties: false,
            properties: {
              method: { enum: ["flat", "tokens"] },
              ...pricingFormula,
              inputPer1k: nonNegative,
              outputPer1k: nonNegative,
            },
            if: { properties: { method: { const: "tokens" } } },
            then: { required: ["inputPer1k", "outputPer1k"] },
            else: { properties: { inputPer1k: false, outputPer1k: false } },
          },
          moderationRefund: {
            type: "object",
            required: ["output"],
            additionalProperties: false,
            properties: { input: { const: 0 }, output: { type: "integer", minimum: 0 } },
          },
          parameters: {
            type: "object",
            required: ["properties"],
            additionalProperties: false,
            properties: {
              type: { const: "object" },
              description: { type: "string" },
              properties: { type: "object", propertyNames: paramName, additionalProperties: { type: "object" } },
              required: { type: "array", uniqueItems: true, items: paramName },
            },
          },
          upstreamModel,
          upstreamUrl,
          simulatedDelayMs: { type: "integer", minimum: 0 },
          maxConcurrency,
          fallbacks: { type: "array", maxItems: 10, items: fallback },
          expectedDurationMs: { type: "integer", minimum: 0 },
          upstreamInput,
          upstreamInputMap,
        },
      },
    },
  },
} as const;
