// The adapters an upstream route may name (catalog `provider`): the built-in simulated provider,
// an upstream speaking our submit-then-poll protocol, and the four real providers.
export const PROVIDER_KINDS = ["simulated", "http", "replicate", "fal", "openai", "runway"] as const;

export type ProviderKind = (typeof PROVIDER_KINDS)[number];
