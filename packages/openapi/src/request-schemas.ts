import { ENDPOINT_INPUT_FIELD, type Catalog, type ModelEntry } from "@gen/catalog";
import { ENDPOINTS, type Endpoint } from "@gen/domain";
import { ENDPOINT_NAMES, modelSchemaName } from "./endpoint-names.ts";
import { type Json, ref } from "./json.ts";

/**
 * One component per model, exactly the schema the gateway validates with (`catalog.requestSchema`),
 * and per endpoint a body that is `oneOf` them, discriminated by `model`.
 */
export function requestSchemas(catalog: Catalog): Record<string, Json> {
  const schemas: Record<string, Json> = {};
  for (const endpoint of ENDPOINTS) {
    const models = catalog.modelsFor(endpoint);
    const names = new Map<ModelEntry, string>();
    for (const model of models) {
      let name = modelSchemaName(model.id);
      while (Object.hasOwn(schemas, name)) name = `${name}X`;
      names.set(model, name);
      schemas[name] = { title: model.id, ...(model.description ? { description: model.description } : {}), ...catalog.requestSchema(model) };
    }
    schemas[`${ENDPOINT_NAMES[endpoint]}Request`] = endpointBody(endpoint, models, names);
  }
  return schemas;
}

function endpointBody(endpoint: Endpoint, models: readonly ModelEntry[], names: Map<ModelEntry, string>): Json {
  const ids = models.map((model) => model.id);
  const description =
    `Body of a ${endpoint} submission: \`model\`, \`${ENDPOINT_INPUT_FIELD[endpoint]}\` and the chosen model's own parameters, ` +
    "plus the optional `webhook_url` (https only, a domain name, port 443 if any, no credentials, at most 2048 characters). Unknown fields are rejected with 20003.";
  if (models.length === 0) return { description: `${description} No model is offered on this endpoint at the moment.`, not: {} };
  // Only the choice of model: each branch is the whole body of its model (its `model` a const). A
  // top-level `properties` beside it would be checked apart from the branches, and example
  // validators that close every object (Redocly's) then refuse the branch's own fields.
  return {
    description: `${description} One of: ${ids.map((id) => `\`${id}\``).join(", ")}.`,
    oneOf: models.map((model) => ref(names.get(model)!)),
    discriminator: {
      propertyName: "model",
      mapping: Object.fromEntries(models.map((model) => [model.id, `#/components/schemas/${names.get(model)!}`])),
    },
  };
}

const SAMPLE_INPUT: Readonly<Record<Endpoint, unknown>> = {
  images: "a lighthouse at dusk",
  videos: "waves rolling onto a beach",
  audio: "rain on a tin roof",
  detect: "Is this written by a model?",
  humanize: "It is imperative to note that results vary.",
  essay: "On bridges",
  moderations: ["hello", "world"],
};

/** A minimal valid body per model of the endpoint (models whose extra required fields have no default or example are skipped). */
export function requestExamples(catalog: Catalog, endpoint: Endpoint): Record<string, Json> {
  const examples: Record<string, Json> = {};
  for (const [index, model] of catalog.modelsFor(endpoint).entries()) {
    const body: Json = { model: model.id, [ENDPOINT_INPUT_FIELD[endpoint]]: SAMPLE_INPUT[endpoint] };
    let complete = true;
    for (const name of model.parameters.required ?? []) {
      const schema = model.parameters.properties[name] ?? {};
      const value = schema.default ?? (Array.isArray(schema.examples) ? schema.examples[0] : undefined);
      if (value === undefined) complete = false;
      else body[name] = value;
    }
    if (!complete) continue;
    if (index === 0) body.webhook_url = "https://hooks.example.com/tasks?secret=abc";
    examples[model.id] = { summary: model.id, value: body };
  }
  return examples;
}
