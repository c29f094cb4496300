/** Everything both apps read from the environment, parsed and validated once at start-up. */
export interface Config {
  databaseUrl: string;
  redisUrl: string;
  queuePrefix: string;
  port: number;
  baseUrl: string;
  cdnUrl: string;
  webhookTimeoutMs: number;
  webhookRetryDelayMs: number;
  webhookFinalAttemptMs: number;
  webhookAllowedCidrs: string[];
  allowedOrigins: string[];
  pollRate: RateConfig;
  submitRate: RateConfig;
  modelCatalogPath: string | undefined;
  storageDir: string;
  workerConcurrency: number;
  reconcileIntervalMs: number;
  logLevel: string;
}

export interface RateConfig {
  perSec: number;
  burst: number;
}
