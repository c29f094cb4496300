export {
  type CompletedResult,
  type Endpoint,
  type Provider,
  type ProviderFile,
  type ProviderJob,
  type ProviderResult,
  MEDIA_ENDPOINTS,
  hasOutput,
} from "./provider.ts";
export { PolicyViolation, type PolicyStage } from "./policy-violation.ts";
export { ProviderUnavailableError } from "./provider-unavailable-error.ts";
export { createSimulatedProvider, SIM_BASE_DELAY_MS } from "./simulated-provider.ts";
export { createHttpProvider, DEFAULT_UPSTREAM_TIMEOUT_MS } from "./http-provider.ts";
export { simulateGeneration } from "./simulate-generation.ts";
export { STORAGE_FAULT_EXTENSION, isStorageFault } from "./storage-fault.ts";
