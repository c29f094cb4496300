import type { ErrorObject } from "ajv";
import { ApiError, Err } from "@gen/errors";
import { describeSchema } from "./describe-schema.ts";
import { ENDPOINT_INPUT_FIELD } from "./endpoints.ts";
import type { JsonSchema, ModelEntry } from "./model-entry.ts";
import { codePointLength, fieldName, jsonKind, quote } from "./safe-text.ts";

type ValueCode =
  typeof Err.ParameterMissing | typeof Err.ParameterInvalid | typeof Err.SizeNotSupported | typeof Err.QualityNotSupported | typeof Err.PromptTooLong;

// docs/api.md#submission-validation-order: model-specific required fields belong to the 20002 step, then the
// value checks in this order.
const RANK: Record<ValueCode, number> = {
  [Err.ParameterMissing]: 0,
  [Err.ParameterInvalid]: 1,
  [Err.SizeNotSupported]: 2,
  [Err.QualityNotSupported]: 3,
  [Err.PromptTooLong]: 4,
};

interface Finding {
  code: ValueCode;
  /** Among findings of one code, the lowest wins: the field's position in the body. */
  order: number;
  message: () => string;
}

/**
 * Turns ajv's errors (allErrors) for one body into the single ApiError the client gets: the
 * earliest code in the order of docs/api.md#submission-validation-order, and within a code the first offending field of the body.
 * `params` is what ajv checked (error-probe.ts); messages read values from `body` when given.
 */
export function validationError(
  errors: readonly ErrorObject[],
  model: ModelEntry,
  params: Record<string, unknown>,
  body: Record<string, unknown> = params,
): ApiError {
  let positions: Map<string, number> | undefined;
  const position = (field: string): number => {
    positions ??= new Map(Object.keys(params).map((key, index) => [key, index]));
    return positions.get(field) ?? positions.size;
  };
  let best: Finding | undefined;
  errors.forEach((error, index) => {
    const finding = classify(error, model, body, position, index);
    if (!best || RANK[finding.code] < RANK[best.code] || (finding.code === best.code && finding.order < best.order)) {
      best = finding;
    }
  });
  return best ? new ApiError(best.code, best.message()) : new ApiError(Err.ParameterInvalid);
}

function classify(error: ErrorObject, model: ModelEntry, params: Record<string, unknown>, position: (field: string) => number, index: number): Finding {
  const path = error.instancePath.split("/").slice(1).map(unescapePointer);
  const field = path[0];
  if (field === undefined) {
    if (error.keyword === "required") {
      const missing = String(error.params.missingProperty);
      return { code: Err.ParameterMissing, order: index, message: () => `Missing required parameter: ${missing}` };
    }
    if (error.keyword === "additionalProperties") {
      const unknown = String(error.params.additionalProperty);
      // Fields the contract gives their own codes even on a model that takes none.
      const at = position(unknown);
      if (unknown === "size") return { code: Err.SizeNotSupported, order: at, message: () => unsupported("Size", params.size, model, "sizes", model.sizes) };
      if (unknown === "quality")
        return { code: Err.QualityNotSupported, order: at, message: () => unsupported("Quality", params.quality, model, "qualities", model.qualities) };
      return { code: Err.ParameterInvalid, order: at, message: () => `Unknown parameter: ${fieldName(unknown)}` };
    }
    return { code: Err.ParameterInvalid, order: -1, message: () => `Invalid request body: ${error.message ?? "not accepted"}` };
  }
  const value = params[field];
  const order = position(field);
  if (error.keyword === "enum" && path.length === 1 && field === "size" && model.sizes) {
    return { code: Err.SizeNotSupported, order, message: () => unsupported("Size", value, model, "sizes", model.sizes) };
  }
  if (error.keyword === "enum" && path.length === 1 && field === "quality" && model.qualities) {
    return { code: Err.QualityNotSupported, order, message: () => unsupported("Quality", value, model, "qualities", model.qualities) };
  }
  if (error.keyword === "maxLength" && field === ENDPOINT_INPUT_FIELD[model.endpoint] && model.maxPromptLength !== undefined) {
    const limit = model.maxPromptLength;
    return { code: Err.PromptTooLong, order, message: () => tooLong(path, value, limit, model.id) };
  }
  const properties = model.schema.properties as Record<string, JsonSchema>;
  const schema = Object.hasOwn(properties, field) ? properties[field] : undefined;
  return {
    code: Err.ParameterInvalid,
    order,
    message: () => {
      const expected = schema && describeSchema(schema);
      return `Invalid value for ${fieldName(field)}: ${expected ? `must be ${expected}` : (error.message ?? "not accepted")}`;
    },
  };
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, "/").replace(/~0/g, "~");
}

function unsupported(label: string, value: unknown, model: ModelEntry, plural: string, options: string[] | undefined): string {
  const shown = typeof value === "string" ? quote(value) : jsonKind(value);
  const supported = options ? `supported ${plural}: ${options.join(", ")}` : `it takes no ${label.toLowerCase()}`;
  return `${label} ${shown} is not supported by model ${model.id}; ${supported}`;
}

function tooLong(path: string[], value: unknown, limit: number, modelId: string): string {
  const [field, item] = path;
  const text = item === undefined ? value : Array.isArray(value) ? value[Number(item)] : undefined;
  const where = item === undefined ? field : `${field}[${item}]`;
  const length = typeof text === "string" ? `; got ${codePointLength(text)}` : "";
  return `${where} exceeds the maximum length of ${limit} characters (Unicode code points) for model ${modelId}${length}`;
}
