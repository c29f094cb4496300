import { CatalogError } from "./catalog-error.ts";
import type { Endpoint } from "./endpoints.ts";
import type { ModelEntry, ParameterSchema, Pricing, Provider, Route } from "./model-entry.ts";
import { DERIVED_FIELDS, composeRequestSchema } from "./request-schema.ts";

/** One element of `models` after the file passed catalogSchema. */
export interface RawEntry {
  id: string;
  endpoint: Endpoint;
  provider: Provider;
  description?: string;
  contentFilter?: boolean;
  maxPromptLength?: number;
  sizes?: string[];
  defaultSize?: string;
  qualities?: string[];
  defaultQuality?: string;
  pricing?: Pricing;
  moderationRefund: { input?: 0; output: number };
  parameters?: ParameterSchema;
  upstreamModel?: string;
  upstreamUrl?: string;
  simulatedDelayMs?: number;
  maxConcurrency?: number;
  fallbacks?: Route[];
  expectedDurationMs?: number;
  upstreamInput?: Record<string, unknown>;
  upstreamInputMap?: Record<string, string | null>;
}

/** Checks the rules a JSON Schema cannot say and derives the request schema. */
export function buildEntry(raw: RawEntry): ModelEntry {
  const fail = (what: string): never => {
    throw new CatalogError(`model ${raw.id}: ${what}`);
  };
  if (raw.defaultSize !== undefined && !raw.sizes?.includes(raw.defaultSize)) {
    fail(`defaultSize "${raw.defaultSize}" is not one of its sizes`);
  }
  if (raw.defaultQuality !== undefined && !raw.qualities?.includes(raw.defaultQuality)) {
    fail(`defaultQuality "${raw.defaultQuality}" is not one of its qualities`);
  }
  const parameters: ParameterSchema = raw.parameters ?? { type: "object", properties: {} };
  for (const name of Object.keys(parameters.properties)) {
    if (DERIVED_FIELDS.includes(name)) {
      fail(`parameters must not declare "${name}" (the catalog derives it from the entry; see README)`);
    }
  }
  for (const name of parameters.required ?? []) {
    if (!Object.hasOwn(parameters.properties, name)) fail(`required parameter "${name}" is not in parameters.properties`);
  }
  const contentFilter = raw.contentFilter ?? false;
  const schema = composeRequestSchema({ ...raw, contentFilter, parameters });
  const accepted = Object.keys(schema.properties as object);
  if (raw.pricing) checkPricingParams(raw.pricing, accepted, fail);
  for (const map of [raw.upstreamInputMap, ...(raw.fallbacks ?? []).map((route) => route.upstreamInputMap)]) {
    for (const name of Object.keys(map ?? {})) {
      if (!accepted.includes(name)) fail(`upstreamInputMap maps "${name}", which is not a parameter of this model`);
    }
  }
  const upstreamModel = raw.upstreamModel ?? raw.id;
  // Providers name inputs differently, so a fallback may bring its own maps; without them it takes the model's.
  const inputs = (route: Partial<Route>) => ({
    ...optional("upstreamInput", route.upstreamInput ?? raw.upstreamInput),
    ...optional("upstreamInputMap", route.upstreamInputMap ?? raw.upstreamInputMap),
  });
  const primary: Route = {
    provider: raw.provider,
    upstreamModel,
    ...optional("upstreamUrl", raw.upstreamUrl),
    ...optional("maxConcurrency", raw.maxConcurrency),
    ...inputs({}),
  };
  return {
    id: raw.id,
    endpoint: raw.endpoint,
    provider: raw.provider,
    ...(raw.description === undefined ? {} : { description: raw.description }),
    contentFilter,
    ...optional("maxPromptLength", raw.maxPromptLength),
    ...optional("sizes", raw.sizes),
    ...optional("defaultSize", raw.defaultSize),
    ...optional("qualities", raw.qualities),
    ...optional("defaultQuality", raw.defaultQuality),
    ...optional("pricing", raw.pricing),
    moderationRefund: { input: 0, output: raw.moderationRefund.output },
    parameters,
    schema,
    upstreamModel,
    ...optional("upstreamUrl", raw.upstreamUrl),
    ...optional("simulatedDelayMs", raw.simulatedDelayMs),
    ...optional("maxConcurrency", raw.maxConcurrency),
    routes: [primary, ...(raw.fallbacks ?? []).map((route) => ({ ...route, ...inputs(route) }))],
    ...optional("expectedDurationMs", raw.expectedDurationMs),
    ...optional("upstreamInput", raw.upstreamInput),
    ...optional("upstreamInputMap", raw.upstreamInputMap),
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

// A price that names a parameter the model cannot receive is an operator's typo: refuse it at
// load rather than answer 30002 to every request.
function checkPricingParams(pricing: Pricing, accepted: string[], fail: (what: string) => never): void {
  const named = [...(pricing.units ?? []).map((unit) => (typeof unit === "string" ? unit : unit.param)), ...Object.keys(pricing.multipliers ?? {})];
  for (const name of named) {
    if (!accepted.includes(name)) fail(`pricing refers to "${name}", which is not a parameter of this model`);
  }
}
