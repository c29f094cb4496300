export { type Endpoint, type InputField, ENDPOINTS, ENDPOINT_PATHS, ENDPOINT_INPUT_FIELD, MAX_MODERATION_INPUTS, isEndpoint } from "./endpoints.ts";
export type {
  FlatPricing,
  JsonSchema,
  ModelEntry,
  ModerationRefund,
  ParameterSchema,
  PriceUnit,
  Pricing,
  Provider,
  Route,
  TokenPricing,
} from "./model-entry.ts";
export { type Catalog, createCatalog } from "./catalog.ts";
export { CatalogError } from "./catalog-error.ts";
export { catalogSchema } from "./catalog-schema.ts";
export { DEFAULT_CATALOG_PATH, loadCatalog } from "./load-catalog.ts";
export { type PriceQuote, moderationCharge, priceFor, tokenCharge } from "./price.ts";
export { DERIVED_FIELDS } from "./request-schema.ts";
export { type UrlParameter, urlParameters } from "./url-parameters.ts";
