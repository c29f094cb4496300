export type { Config, ConsoleConfig, HttpConfig, RateConfig, RedisConfig, RedisNode, StorageConfig, TracingConfig, UpstreamCallbackConfig } from "./config.ts";
export { ConfigError } from "./config-error.ts";
export { loadConfig, DEFAULT_DATABASE_URL } from "./load-config.ts";
export { PROVIDER_CREDENTIAL_VARIABLES, type CredentialedProvider } from "./provider-credentials.ts";
