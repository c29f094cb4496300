export { type CompletedResult, type Provider, type ProviderFile, type ProviderJob, type ProviderResult, hasOutput } from "./provider.ts";
export { PolicyViolation, type PolicyStage } from "./policy-violation.ts";
export { ProviderUnavailableError } from "./provider-unavailable-error.ts";
export { UpstreamErrorType, UpstreamJobStatus } from "./upstream-vocabulary.ts";
export { createHttpProvider, DEFAULT_UPSTREAM_TIMEOUT_MS, type HttpProviderOptions } from "./http-provider.ts";
