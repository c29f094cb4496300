export {
  type CompletedResult,
  type Provider,
  type ProviderFile,
  type ProviderJob,
  type ProviderKind,
  type ProviderOptions,
  type ProviderResult,
  type Submitted,
  hasOutput,
} from "./provider.ts";
export { PolicyViolation, type PolicyStage } from "./policy-violation.ts";
export { ProviderUnavailableError } from "./provider-unavailable-error.ts";
export { UpstreamRejection } from "./upstream-rejection.ts";
export { causeMessage, type UpstreamCause } from "./upstream-cause.ts";
export { createCappedFetch, type CappedFetchOptions } from "./capped-fetch.ts";
export { mapInput } from "./map-input.ts";
export { parseRetryAfter } from "./retry-after.ts";
export { UpstreamErrorType, UpstreamJobStatus } from "./upstream-vocabulary.ts";
export { createHttpProvider, DEFAULT_UPSTREAM_TIMEOUT_MS, type HttpProviderOptions } from "./http-provider.ts";
export { createOpenAIProvider } from "./openai/openai-provider.ts";
export { OPENAI_DEFAULT_BASE_URL, type OpenAIProviderOptions } from "./openai/openai-clients.ts";
export { createReplicateProvider, REPLICATE_DEFAULT_BASE_URL } from "./replicate/replicate-provider.ts";
export { REPLICATE_DEFAULT_INPUT_MAP } from "./replicate/replicate-input.ts";
export { createRunwayProvider, RUNWAY_DEFAULT_BASE_URL } from "./runway/runway-provider.ts";
export { RUNWAY_DEFAULT_INPUT_MAP } from "./runway/runway-input.ts";
