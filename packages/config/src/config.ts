import type { CredentialedProvider } from "./provider-credentials.ts";

/** Everything both apps read from the environment, parsed and validated once at start-up. */
export interface Config {
  databaseUrl: string;
  /** Connections in each process's PostgreSQL pool (DATABASE_POOL_SIZE, 2..1000); the gateway's revocation listener is one more. */
  databasePoolSize: number;
  /** REDIS_URL as given. Connect through `redis` (it may name a Sentinel group or a cluster instead). */
  redisUrl: string;
  /** Where Redis is: REDIS_CLUSTER_NODES or REDIS_SENTINELS win over REDIS_URL. */
  redis: RedisConfig;
  queuePrefix: string;
  port: number;
  /** Gateway processes sharing `port` (GATEWAY_PROCESSES, 1..64); above 1 a cluster primary supervises them. */
  gatewayProcesses: number;
  /** Deadlines and the connection cap of every HTTP listener (gateway and console), per process. */
  http: HttpConfig;
  baseUrl: string;
  cdnUrl: string;
  webhookTimeoutMs: number;
  webhookRetryDelayMs: number;
  webhookFinalAttemptMs: number;
  webhookAllowedCidrs: string[];
  /** Ranges beyond public addresses that URL parameters handed to an upstream (image_url) may point at; never cloud metadata. */
  inputUrlAllowedCidrs: string[];
  allowedOrigins: string[];
  /**
   * Express's `trust proxy`, in a safe subset: false (X-Forwarded-For ignored), a hop count, or
   * the proxies' addresses (IPs, CIDRs, `loopback`, `linklocal`, `uniquelocal`). Never "all".
   */
  trustProxy: false | number | string[];
  pollRate: RateConfig;
  submitRate: RateConfig;
  /** API requests whose key is not found, per client address (a bogus-key flood is refused before PostgreSQL). */
  badKeyRate: RateConfig;
  modelCatalogPath: string | undefined;
  storage: StorageConfig;
  upstreamUrl: string;
  /** Ranges upstream output files may be downloaded from (beyond public addresses); never cloud metadata. */
  upstreamAllowedCidrs: string[];
  /** Largest body of an upstream's submit, poll or cancel answer read (UPSTREAM_MAX_RESPONSE_BYTES). */
  upstreamMaxResponseBytes: number;
  /**
   * UPSTREAM_CALLBACK_URL and UPSTREAM_CALLBACK_SECRET: the public base at which providers reach the
   * gateway's callback route, and the key its per-task tokens are signed with. Absent: no
   * upstream job is given a callback address, and the route is not served.
   */
  upstreamCallback: UpstreamCallbackConfig | undefined;
  /** Time limit of one request to an upstream provider (UPSTREAM_TIMEOUT_MS). */
  upstreamTimeoutMs: number;
  /**
   * How long after a task started a submit that found every route unavailable (5xx, network
   * error) is tried again before the task fails 80001 (UPSTREAM_SUBMIT_RETRY_MS). A 429 is waited out whatever it says.
   */
  upstreamSubmitRetryMs: number;
  /** The real providers' credentials that are set (REPLICATE_API_TOKEN, FAL_KEY, OPENAI_API_KEY, RUNWAYML_API_SECRET). */
  providerCredentials: Partial<Record<CredentialedProvider, string>>;
  generationTimeoutMs: number;
  downloadMaxBytes: number;
  downloadTimeoutMs: number;
  workerConcurrency: number;
  /** Webhook delivery jobs one worker process runs at once (I/O bound, so far above workerConcurrency). */
  deliveryConcurrency: number;
  /** Attempts in flight to one receiver host across the whole fleet (WEBHOOK_HOST_CONCURRENCY). */
  webhookHostConcurrency: number;
  /** Attempts in flight for one customer (task owner), all its receivers together, across the whole fleet, beyond which the rest are delayed (WEBHOOK_CUSTOMER_CONCURRENCY). */
  webhookCustomerConcurrency: number;
  reconcileIntervalMs: number;
  retention: RetentionConfig;
  /** Port of the worker's Prometheus endpoint (GET /metrics); 0 turns it off. */
  workerMetricsPort: number;
  /** Port of the gateway's Prometheus endpoint, apart from the public API listener; 0 turns it off. */
  gatewayMetricsPort: number;
  /** When set, the gateway also answers GET /metrics on the API port to `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** Put before every metric name of ours (METRICS_PREFIX, default `gen_`). */
  metricsPrefix: string;
  /** The source commit this build was made from (BUILD_COMMIT), for `build_info`; undefined when unknown. */
  buildCommit: string | undefined;
  jobLockMs: number;
  logLevel: string;
  console: ConsoleConfig;
  /** OpenTelemetry traces (OTEL_* variables); undefined: off. */
  tracing: TracingConfig | undefined;
}

export type TracesSampler = "always_on" | "always_off" | "traceidratio" | "parentbased_always_on" | "parentbased_always_off" | "parentbased_traceidratio";

export interface TracingConfig {
  /** OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL. */
  protocol: "http/protobuf" | "http/json";
  /** OTEL_TRACES_SAMPLER. */
  sampler: TracesSampler;
  /** OTEL_TRACES_SAMPLER_ARG, for the ratio samplers. */
  samplerRatio: number;
  /** OTEL_BSP_SCHEDULE_DELAY: how long finished spans gather before an export. */
  batchDelayMs: number;
}

export interface UpstreamCallbackConfig {
  /** An http(s) base without query or fragment, no trailing slash. */
  url: string;
  secret: string;
}

/** How long finished tasks and their media are kept; undefined keeps them for ever (the default). */
interface RetentionConfig {
  /** TASK_RETENTION_DAYS: finished tasks are removed this many days after they finished, with everything that references them. */
  taskDays: number | undefined;
  /** MEDIA_RETENTION_DAYS: a finished task's stored media are removed this many days after it finished; the task row stays. */
  mediaDays: number | undefined;
  /** TASK_ARCHIVE: `storage` writes each removed task, as a JSON line, to the storage backend before it is removed. */
  archive: "off" | "storage";
}

export interface HttpConfig {
  /** A request's line and headers must arrive within this (HTTP_HEADERS_TIMEOUT_MS); else 408 and the socket closes. */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (HTTP_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (HTTP_KEEP_ALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs: number;
  /** Open connections one process accepts (HTTP_MAX_CONNECTIONS); beyond it new ones are closed at once. */
  maxConnections: number;
}

export interface ConsoleConfig {
  /** A console session ends after this long without a request. */
  sessionIdleMs: number;
  /** ...and this long after sign-in, whatever its use. */
  sessionMaxMs: number;
  /** Sign-in attempts per client address and per e-mail. */
  signInRate: RateConfig;
  /** Whether the gateway serves the console at /console on its own port (CONSOLE_ON_GATEWAY). */
  onGateway: boolean;
  /** Port of `pnpm start:console`, the console on a listener of its own (CONSOLE_PORT). */
  port: number;
  /** The address operators reach `pnpm start:console` at (CONSOLE_BASE_URL): same-origin checks, Secure cookies. */
  baseUrl: string;
  /** Signs session and sign-in CSRF cookies; unset, one random secret per deployment is kept in Redis. */
  sessionSecret: string | undefined;
}

export interface StorageConfig {
  backend: "local" | "s3";
  dir: string;
  s3Bucket: string | undefined;
  s3Region: string | undefined;
  s3Endpoint: string | undefined;
  s3ForcePathStyle: boolean;
}

export interface RateConfig {
  perSec: number;
  burst: number;
}

export interface RedisNode {
  host: string;
  port: number;
}

export type RedisConfig =
  | { mode: "single"; url: string }
  | { mode: "sentinel"; sentinels: RedisNode[]; name: string; password: string | undefined; sentinelPassword: string | undefined }
  | { mode: "cluster"; nodes: RedisNode[]; password: string | undefined };
