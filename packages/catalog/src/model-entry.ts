import type { ProviderKind } from "@gen/domain";
import type { Endpoint } from "./endpoints.ts";

/** The adapter of an upstream route; the list is @gen/domain's PROVIDER_KINDS. */
export type Provider = ProviderKind;

/** One upstream a model can run on: its primary (the entry's own fields) or one of its `fallbacks`. */
export interface Route {
  provider: Provider;
  /** The provider's model id. */
  upstreamModel: string;
  /** The provider's API base, as its SDK takes it; absent: the SDK's default (UPSTREAM_URL for "http"). */
  upstreamUrl?: string;
  /** Most jobs running at once on this route across the fleet; absent: no cap. */
  maxConcurrency?: number;
  /** Constant inputs for this route's provider: a fallback's own, else the model's `upstreamInput`. */
  upstreamInput?: Record<string, unknown>;
  /** Our parameter names for this route's provider: a fallback's own, else the model's `upstreamInputMap`. */
  upstreamInputMap?: Record<string, string | null>;
}

/** A JSON Schema object, as written in the catalog file. */
export type JsonSchema = { [keyword: string]: unknown };

/** A model's own parameters (everything but the fields the catalog derives, see README). */
export interface ParameterSchema {
  type?: "object";
  description?: string;
  properties: Record<string, JsonSchema>;
  required?: string[];
}

/**
 * A count that multiplies the price: the value of a numeric parameter, the length in code points
 * of a string parameter, or the sum of these over an array. With `per`, the count is divided by
 * `per` and rounded up (e.g. per 1000 characters, per 100 words).
 */
export type PriceUnit = string | { param: string; per: number };

interface PricingFormula {
  /** Credits for one unit before multipliers. */
  credits: number;
  units?: PriceUnit[];
  /** Per parameter, a factor for each accepted value (e.g. `size` → { "1024x1024": 4 }). */
  multipliers?: Record<string, Record<string, number>>;
}

export interface FlatPricing extends PricingFormula {
  method: "flat";
}

/** Exact token billing: the formula gives the most that is reserved; the worker charges by tokens. */
export interface TokenPricing extends PricingFormula {
  method: "tokens";
  /** Credits per 1000 input tokens (may be fractional; the total is rounded up). */
  inputPer1k: number;
  /** Credits per 1000 output tokens. */
  outputPer1k: number;
}

export type Pricing = FlatPricing | TokenPricing;

export interface ModerationRefund {
  /** Credits kept when the verdict came before generation: always 0. */
  input: 0;
  /** Credits kept when the verdict came on the output (capped at the reservation). */
  output: number;
}

export interface ModelEntry {
  id: string;
  endpoint: Endpoint;
  provider: Provider;
  description?: string;
  /** Whether the model accepts the boolean `content_filter` parameter. */
  contentFilter: boolean;
  /** Limit, in Unicode code points, of the prompt (or `text`, or each `input` string). */
  maxPromptLength?: number;
  sizes?: string[];
  defaultSize?: string;
  qualities?: string[];
  defaultQuality?: string;
  /** Absent: every submission to this model fails with 30002. */
  pricing?: Pricing;
  moderationRefund: ModerationRefund;
  /** The model's own parameters, as declared in the file. */
  parameters: ParameterSchema;
  /** The full request body schema used for validation (without `webhook_url`). */
  schema: JsonSchema;
  /** Model name sent to an upstream provider; the id unless the file says otherwise. */
  upstreamModel: string;
  /** Base URL of the upstream for provider "http"; absent: the worker's configured upstream. */
  upstreamUrl?: string;
  /** Default completion delay of the simulated provider; a `[[sim:delay_ms=n]]` directive overrides it. */
  simulatedDelayMs?: number;
  /** Most upstream jobs of the primary route running at once across the fleet; absent: no cap. */
  maxConcurrency?: number;
  /** The upstreams tried at submit, in order: the primary (provider, upstreamModel, upstreamUrl, maxConcurrency), then each fallback. */
  routes: Route[];
  /** How long a job usually takes upstream, which shapes the poll schedule; absent: the generic schedule. */
  expectedDurationMs?: number;
  /** Constant inputs laid over the mapped parameters in every job sent upstream. */
  upstreamInput?: Record<string, unknown>;
  /** Our parameter name -> the provider's input name (null: not sent), over the adapter's default mapping. */
  upstreamInputMap?: Record<string, string | null>;
}
