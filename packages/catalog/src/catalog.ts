import type { ErrorObject, ValidateFunction } from "ajv";
import { ApiError, Err } from "@gen/errors";
import { buildEntry, type RawEntry } from "./build-entry.ts";
import { CatalogError } from "./catalog-error.ts";
import { catalogSchema } from "./catalog-schema.ts";
import { createAjv } from "./create-ajv.ts";
import { ENDPOINTS, ENDPOINT_INPUT_FIELD, ENDPOINT_PATHS, type Endpoint } from "./endpoints.ts";
import { errorProbe, isProbeSized } from "./error-probe.ts";
import type { JsonSchema, ModelEntry } from "./model-entry.ts";
import { priceFor, type PriceQuote } from "./price.ts";
import { WEBHOOK_URL_SCHEMA } from "./request-schema.ts";
import { jsonKind, quote } from "./safe-text.ts";
import { validationError } from "./validation-error.ts";

export interface Catalog {
  models: readonly ModelEntry[];
  model(id: string): ModelEntry | undefined;
  modelsFor(endpoint: Endpoint): readonly ModelEntry[];
  /**
   * Validates a parsed JSON object body (without `webhook_url`, which the caller checks after
   * this). Throws ApiError 20002, 20004, 20003, 20005, 20006 or 20007 in the order of docs/api.md#submission-validation-order.
   * `params` is a shallow copy of the body with schema defaults filled in.
   */
  validate(endpoint: Endpoint, body: Record<string, unknown>): { model: ModelEntry; params: Record<string, unknown> };
  /** Credits to reserve. Throws ApiError 30002 when the model's pricing cannot price these params. */
  price(model: ModelEntry, params: Record<string, unknown>): PriceQuote;
  /** JSON Schema of one model's request body, `webhook_url` included (for the OpenAPI document). */
  requestSchema(model: ModelEntry): JsonSchema;
}

const MAX_REPORTED_ERRORS = 10;

/** One model's request schema compiled twice: to decide (first error), and to explain a refusal. */
interface Validators {
  decide: ValidateFunction;
  explain: ValidateFunction;
}

/**
 * Builds a catalog from the parsed content of a catalog file. Throws CatalogError naming
 * `source` when the content breaks catalogSchema or a rule across fields.
 */
export function createCatalog(content: unknown, source = "model catalog"): Catalog {
  const ajv = createAjv();
  const firstErrorAjv = createAjv(false);
  const checkFile = ajv.compile(catalogSchema);
  if (!checkFile(content)) throw new CatalogError(`${source} is invalid: ${describeFileErrors(checkFile.errors ?? [], content)}`);
  const raws = (content as { models: RawEntry[] }).models;

  const byId = new Map<string, ModelEntry>();
  const validators = new Map<ModelEntry, Validators>();
  const models: ModelEntry[] = [];
  for (const raw of raws) {
    if (byId.has(raw.id)) throw new CatalogError(`${source} is invalid: model id ${raw.id} appears twice`);
    let entry: ModelEntry;
    let validate: Validators;
    try {
      entry = buildEntry(raw);
      validate = { decide: firstErrorAjv.compile(entry.schema), explain: ajv.compile(entry.schema) };
    } catch (error) {
      const reason = error instanceof CatalogError ? error.message : `model ${raw.id}: invalid parameters schema: ${(error as Error).message}`;
      throw new CatalogError(`${source} is invalid: ${reason}`);
    }
    deepFreeze(entry);
    byId.set(entry.id, entry);
    validators.set(entry, validate);
    models.push(entry);
  }
  Object.freeze(models);

  const perEndpoint = new Map<Endpoint, Map<string, ModelEntry>>(ENDPOINTS.map((e) => [e, new Map()]));
  for (const entry of models) perEndpoint.get(entry.endpoint)?.set(entry.id, entry);
  const lists = new Map(ENDPOINTS.map((e) => [e, Object.freeze([...(perEndpoint.get(e)?.values() ?? [])])]));

  return {
    models,
    model: (id) => byId.get(id),
    modelsFor: (endpoint) => lists.get(endpoint) ?? [],
    validate(endpoint, body) {
      for (const field of ["model", ENDPOINT_INPUT_FIELD[endpoint]]) {
        if (own(body, field) === undefined) throw new ApiError(Err.ParameterMissing, `Missing required parameter: ${field}`);
      }
      const requested = own(body, "model");
      if (typeof requested !== "string") throw notAString(requested, endpoint);
      const model = perEndpoint.get(endpoint)?.get(requested);
      if (!model) throw unknownModel(requested, endpoint, byId);
      const check = validators.get(model);
      if (!check) throw new Error(`model ${model.id} does not belong to this catalog`);
      // An ordinary body is decided by its first error, in time bounded by the body; a refusal
      // collects every error, but on a probe whose size the body's shape cannot inflate. A body
      // with an unknown field or an over-long value is refused for sure and never copied whole.
      let params = body;
      if (isProbeSized(body, model)) {
        params = copyForDefaults(body);
        if (check.decide(params)) return { model, params };
      }
      const probe = errorProbe(params, model);
      if (!check.explain(probe)) throw validationError(check.explain.errors ?? [], model, probe, params);
      // Not expected (the probe keeps whatever makes the body invalid); the first error still answers.
      check.decide({ ...params });
      throw validationError(check.decide.errors ?? [], model, params);
    },
    price: priceFor,
    requestSchema(model) {
      const schema = structuredClone(model.schema);
      (schema.properties as Record<string, JsonSchema>).webhook_url = { ...WEBHOOK_URL_SCHEMA };
      return schema;
    },
  };
}

/**
 * The copy of a body that Ajv's `useDefaults` fills in, built by assignment: V8 gives an object
 * made by spread a new hidden class for every property added to it afterwards (the defaults of an
 * image request cost ~5 us that way, ~0.1 us on this copy). The same own
 * keys in the same order; a `__proto__` key (an own property of parsed JSON) is copied by spread,
 * which defines it where an assignment would set the prototype.
 */
function copyForDefaults(body: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(body)) {
    if (key === "__proto__") return { ...body };
    copy[key] = body[key];
  }
  return copy;
}

function own(body: Record<string, unknown>, field: string): unknown {
  return Object.hasOwn(body, field) ? body[field] : undefined;
}

// A value of the wrong type, like any other parameter; 20004 is for a string that
// names no model of the endpoint.
function notAString(requested: unknown, endpoint: Endpoint): ApiError {
  return new ApiError(
    Err.ParameterInvalid,
    `Invalid value for model: must be a string naming a model supported on ${ENDPOINT_PATHS[endpoint]}; got ${jsonKind(requested)}`,
  );
}

function unknownModel(requested: string, endpoint: Endpoint, byId: Map<string, ModelEntry>): ApiError {
  const path = ENDPOINT_PATHS[endpoint];
  const elsewhere = byId.get(requested);
  const hint = elsewhere ? ` (it is a model of ${ENDPOINT_PATHS[elsewhere.endpoint]})` : "";
  return new ApiError(Err.ModelNotSupported, `Model ${quote(requested)} is not supported on ${path}${hint}`);
}

function describeFileErrors(all: readonly ErrorObject[], content: unknown): string {
  // An if/then/else failure repeats what the failing branch already said.
  const errors = all.filter((error) => error.keyword !== "if");
  const lines = errors.slice(0, MAX_REPORTED_ERRORS).map((error) => {
    const where = error.instancePath === "" ? "(top level)" : error.instancePath;
    const modelIndex = /^\/models\/(\d+)/.exec(error.instancePath)?.[1];
    const id = modelIndex === undefined ? undefined : modelId(content, Number(modelIndex));
    return `${where}${id ? ` [model ${id}]` : ""} ${fileErrorText(error)}`;
  });
  if (errors.length > MAX_REPORTED_ERRORS) lines.push(`and ${errors.length - MAX_REPORTED_ERRORS} more`);
  return lines.join("; ");
}

function fileErrorText(error: ErrorObject): string {
  switch (error.keyword) {
    case "additionalProperties":
      return `must NOT have additional properties (${String(error.params.additionalProperty)})`;
    case "enum":
      return `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    case "false schema":
      return "is not allowed here";
    default:
      return error.message ?? "is invalid";
  }
}

function modelId(content: unknown, index: number): string | undefined {
  const models = (content as { models?: unknown }).models;
  const entry = Array.isArray(models) ? (models[index] as { id?: unknown } | undefined) : undefined;
  return typeof entry?.id === "string" ? entry.id : undefined;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}
