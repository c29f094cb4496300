import { ENDPOINT_PATHS, type Catalog, type ModelEntry, type Pricing } from "@gen/catalog";

/**
 * The body of `GET /api/v1/models` (docs/api.md#list-models): every catalog model a submission can
 * use, in the catalog's order. A model without pricing is left out: every submission to it fails
 * with 30002. The catalog is fixed for the life of the process, so the body is built once.
 */
export function modelListBody(catalog: Catalog): string {
  const data = catalog.models.filter((model) => model.pricing !== undefined).map((model) => publicModel(catalog, model, model.pricing!));
  return JSON.stringify({ data });
}

function publicModel(catalog: Catalog, model: ModelEntry, pricing: Pricing): Record<string, unknown> {
  return {
    id: model.id,
    endpoint: model.endpoint,
    path: ENDPOINT_PATHS[model.endpoint],
    description: model.description ?? null,
    // The JSON Schema submissions are validated with, `webhook_url` included.
    parameters: catalog.requestSchema(model),
    sizes: model.sizes ?? null,
    default_size: model.defaultSize ?? null,
    qualities: model.qualities ?? null,
    default_quality: model.defaultQuality ?? null,
    max_prompt_length: model.maxPromptLength ?? null,
    content_filter: model.contentFilter,
    pricing: pricingSummary(pricing),
  };
}

/** How the price is computed (README of @gen/catalog, "pricing"), without the provider's side. */
function pricingSummary(pricing: Pricing): Record<string, unknown> {
  return {
    method: pricing.method,
    credits: pricing.credits,
    units: (pricing.units ?? []).map((unit) => (typeof unit === "string" ? { parameter: unit, per: 1 } : { parameter: unit.param, per: unit.per })),
    multipliers: pricing.multipliers ?? {},
    tokens: pricing.method === "tokens" ? { input_per_1k: pricing.inputPer1k, output_per_1k: pricing.outputPer1k } : null,
  };
}
