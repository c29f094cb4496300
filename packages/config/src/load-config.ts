import { isIP } from "node:net";
import path from "node:path";
import { RENDER_TIMEOUT_MS } from "@gen/domain";
import type { Config, UpstreamCallbackConfig } from "./config.ts";
import { providerCredentials } from "./provider-credentials.ts";
import { redisConfig } from "./redis-config.ts";
import { tracingConfig } from "./tracing-config.ts";
import { ConfigError } from "./config-error.ts";

type Env = Record<string, string | undefined>;

export const DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/gen";

/** Parses the environment (docs/configuration.md lists every variable). Throws ConfigError. */
export function loadConfig(env: Env = process.env): Config {
  const port = int(env, "PORT", 8080, 0, 65535);
  const baseUrl = url(env, "BASE_URL", `http://localhost:${port}`);
  const consolePort = int(env, "CONSOLE_PORT", 8081, 0, 65535);
  const config: Config = {
    databaseUrl: str(env, "DATABASE_URL", DEFAULT_DATABASE_URL),
    // One connection would leave a submission's batch statement and the locked users' lanes
    // (submit-task.ts) waiting on each other; a four-digit pool per process is a typo.
    databasePoolSize: int(env, "DATABASE_POOL_SIZE", 10, 2, 1000),
    redisUrl: str(env, "REDIS_URL", "redis://127.0.0.1:6379"),
    redis: redisConfig(env, str(env, "REDIS_URL", "redis://127.0.0.1:6379"), str(env, "QUEUE_PREFIX", "gen")),
    queuePrefix: str(env, "QUEUE_PREFIX", "gen"),
    port,
    gatewayProcesses: int(env, "GATEWAY_PROCESSES", 1, 1, 64),
    http: {
      headersTimeoutMs: int(env, "HTTP_HEADERS_TIMEOUT_MS", 10_000, 1000),
      requestTimeoutMs: int(env, "HTTP_REQUEST_TIMEOUT_MS", 120_000, 1000),
      keepAliveTimeoutMs: int(env, "HTTP_KEEP_ALIVE_TIMEOUT_MS", 5_000, 1000),
      maxConnections: int(env, "HTTP_MAX_CONNECTIONS", 10_000, 1),
    },
    baseUrl,
    cdnUrl: url(env, "CDN_URL", `${baseUrl}/cdn`),
    webhookTimeoutMs: int(env, "WEBHOOK_TIMEOUT_MS", 10_000, 1),
    webhookRetryDelayMs: int(env, "WEBHOOK_RETRY_DELAY_MS", 40_000, 0),
    webhookFinalAttemptMs: int(env, "WEBHOOK_FINAL_ATTEMPT_MS", 300_000, 0),
    webhookAllowedCidrs: list(env, "WEBHOOK_ALLOWED_CIDRS"),
    inputUrlAllowedCidrs: list(env, "INPUT_URL_ALLOWED_CIDRS"),
    allowedOrigins: list(env, "ALLOWED_ORIGINS"),
    trustProxy: trustProxy(env),
    pollRate: { perSec: num(env, "POLL_RATE_PER_SEC", 20), burst: int(env, "POLL_RATE_BURST", 40, 1) },
    submitRate: { perSec: num(env, "SUBMIT_RATE_PER_SEC", 10), burst: int(env, "SUBMIT_RATE_BURST", 20, 1) },
    badKeyRate: { perSec: num(env, "BAD_KEY_RATE_PER_MIN", 30) / 60, burst: int(env, "BAD_KEY_BURST", 30, 1) },
    modelCatalogPath: env.MODEL_CATALOG || undefined,
    storage: {
      backend: oneOf(env, "STORAGE_BACKEND", ["local", "s3"] as const, "local"),
      dir: path.resolve(str(env, "STORAGE_DIR", "var/storage")),
      s3Bucket: env.S3_BUCKET || undefined,
      s3Region: env.S3_REGION || undefined,
      s3Endpoint: env.S3_ENDPOINT || undefined,
      s3ForcePathStyle: env.S3_FORCE_PATH_STYLE === "true",
    },
    upstreamUrl: url(env, "UPSTREAM_URL", "http://127.0.0.1:8090"),
    upstreamAllowedCidrs: [],
    upstreamMaxResponseBytes: int(env, "UPSTREAM_MAX_RESPONSE_BYTES", 1024 * 1024, 1),
    upstreamCallback: upstreamCallback(env),
    upstreamTimeoutMs: int(env, "UPSTREAM_TIMEOUT_MS", 10_000, 1),
    upstreamSubmitRetryMs: int(env, "UPSTREAM_SUBMIT_RETRY_MS", 30_000, 0),
    providerCredentials: providerCredentials(env),
    generationTimeoutMs: int(env, "GENERATION_TIMEOUT_MS", 600_000, 1),
    downloadMaxBytes: int(env, "DOWNLOAD_MAX_BYTES", 50 * 1024 * 1024, 1),
    downloadTimeoutMs: int(env, "DOWNLOAD_TIMEOUT_MS", 30_000, 1),
    workerConcurrency: int(env, "WORKER_CONCURRENCY", 16, 1),
    deliveryConcurrency: int(env, "DELIVERY_CONCURRENCY", 64, 1),
    webhookHostConcurrency: int(env, "WEBHOOK_HOST_CONCURRENCY", 32, 1),
    webhookCustomerConcurrency: int(env, "WEBHOOK_CUSTOMER_CONCURRENCY", 64, 1),
    reconcileIntervalMs: int(env, "RECONCILE_INTERVAL_MS", 15_000, 100),
    retention: {
      // A day at least: the idempotency window is 24 hours, and a key must never answer with a removed task.
      taskDays: optionalInt(env, "TASK_RETENTION_DAYS", 1, 36_500),
      mediaDays: optionalInt(env, "MEDIA_RETENTION_DAYS", 1, 36_500),
      archive: oneOf(env, "TASK_ARCHIVE", ["off", "storage"] as const, "off"),
    },
    workerMetricsPort: int(env, "WORKER_METRICS_PORT", 9091, 0, 65535),
    gatewayMetricsPort: int(env, "GATEWAY_METRICS_PORT", 9090, 0, 65535),
    metricsToken: secret(env, "METRICS_TOKEN", 16),
    metricsPrefix: pattern(
      env,
      "METRICS_PREFIX",
      "gen_",
      /^[A-Za-z_][A-Za-z0-9_]{0,63}$/,
      "a Prometheus name start (letters, digits, _; not a digit first; at most 64)",
    ),
    buildCommit: optionalPattern(env, "BUILD_COMMIT", /^[A-Za-z0-9._-]{1,64}$/, "a commit id (letters, digits, . _ -; at most 64)"),
    jobLockMs: int(env, "JOB_LOCK_MS", 30_000, 500),
    logLevel: str(env, "LOG_LEVEL", "info"),
    console: {
      sessionIdleMs: int(env, "CONSOLE_SESSION_IDLE_MS", 8 * 3600_000, 1000),
      sessionMaxMs: int(env, "CONSOLE_SESSION_MAX_MS", 24 * 3600_000, 1000),
      signInRate: { perSec: num(env, "CONSOLE_SIGN_IN_RATE_PER_MIN", 10) / 60, burst: int(env, "CONSOLE_SIGN_IN_BURST", 10, 1) },
      onGateway: bool(env, "CONSOLE_ON_GATEWAY", true),
      port: consolePort,
      baseUrl: url(env, "CONSOLE_BASE_URL", `http://localhost:${consolePort}`),
      sessionSecret: secret(env, "CONSOLE_SESSION_SECRET", 32),
    },
    tracing: tracingConfig(env),
  };
  // Attempt 2 must finish by finished + FINAL, whatever happened to attempt 1. Attempt 1 takes up to
  // its body's build and the timeout; a worker dying in it, or a Redis losing the job of attempt 2,
  // is repaired by the delivery reconciler, which waits one interval past the attempt's longest time
  // (or its due time) and runs once per interval; then the retry delay, then attempt 2's own timeout.
  // A shorter FINAL makes every recovered attempt 2 a `stale_claim`.
  const recoveryMs = 2 * config.reconcileIntervalMs;
  const earliestFinal = config.webhookRetryDelayMs + 2 * config.webhookTimeoutMs + RENDER_TIMEOUT_MS + recoveryMs;
  if (config.webhookFinalAttemptMs < earliestFinal) {
    throw new ConfigError(
      `WEBHOOK_FINAL_ATTEMPT_MS must be at least WEBHOOK_RETRY_DELAY_MS + 2 x WEBHOOK_TIMEOUT_MS + ${RENDER_TIMEOUT_MS / 1000} s + 2 x RECONCILE_INTERVAL_MS (${earliestFinal}), got ${config.webhookFinalAttemptMs}: attempt 2 after a lost attempt or a Redis loss could not finish inside its window`,
    );
  }
  // Node refuses a listener whose header deadline outlasts the whole request's.
  if (config.http.headersTimeoutMs > config.http.requestTimeoutMs) {
    throw new ConfigError(
      `HTTP_HEADERS_TIMEOUT_MS (${config.http.headersTimeoutMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${config.http.requestTimeoutMs})`,
    );
  }
  const { taskDays, mediaDays } = config.retention;
  // Removing a task removes its media too, so a longer media retention could never be kept.
  if (taskDays !== undefined && mediaDays !== undefined && mediaDays > taskDays) {
    throw new ConfigError(`MEDIA_RETENTION_DAYS (${mediaDays}) must not exceed TASK_RETENTION_DAYS (${taskDays}): media are removed with their task`);
  }
  if (config.retention.archive !== "off" && taskDays === undefined)
    throw new ConfigError("TASK_ARCHIVE needs TASK_RETENTION_DAYS: only removed tasks are archived");
  config.upstreamAllowedCidrs = env.UPSTREAM_ALLOWED_CIDRS ? list(env, "UPSTREAM_ALLOWED_CIDRS") : upstreamHostAddresses(config.upstreamUrl);
  if (config.storage.backend === "s3" && !config.storage.s3Bucket) throw new ConfigError("S3_BUCKET is required when STORAGE_BACKEND=s3");
  return config;
}

/**
 * The default UPSTREAM_ALLOWED_CIDRS: exactly the address UPSTREAM_URL names, so a loopback or
 * private upstream (the simulator, the default http://127.0.0.1:8090) keeps working while its
 * files may come from nowhere else private. A public upstream needs no entry; a named private
 * one must be listed, since its address is only known at resolution time.
 */
function upstreamHostAddresses(upstreamUrl: string): string[] {
  const host = new URL(upstreamUrl).hostname.replace(/^\[(.*)\]$/, "$1");
  if (host === "localhost") return ["127.0.0.1", "::1"];
  return isIP(host) === 0 ? [] : [host];
}

/**
 * UPSTREAM_CALLBACK_URL, with the secret its tokens are signed with. A secret is required with it:
 * every gateway and worker process must sign and check the same tokens, so none can make its own.
 */
function upstreamCallback(env: Env): UpstreamCallbackConfig | undefined {
  const raw = str(env, "UPSTREAM_CALLBACK_URL", "");
  if (raw === "") return undefined;
  const parsed = URL.canParse(raw) ? new URL(raw) : undefined;
  if (
    !parsed ||
    (parsed.protocol !== "http:" && parsed.protocol !== "https:") ||
    parsed.search !== "" ||
    parsed.hash !== "" ||
    parsed.username !== "" ||
    parsed.password !== ""
  ) {
    throw new ConfigError(`UPSTREAM_CALLBACK_URL must be an http(s) base address without query, fragment or credentials, got "${raw}"`);
  }
  const key = secret(env, "UPSTREAM_CALLBACK_SECRET", 32);
  if (key === undefined) throw new ConfigError("UPSTREAM_CALLBACK_SECRET (at least 32 characters) is required with UPSTREAM_CALLBACK_URL");
  return { url: raw.replace(/\/+$/, ""), secret: key };
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = str(env, name, fallback);
  if (!(allowed as readonly string[]).includes(value)) throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, got "${value}"`);
  return value as T;
}

function str(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === "" ? fallback : value;
}

function pattern(env: Env, name: string, fallback: string, shape: RegExp, described: string): string {
  return optionalPattern(env, name, shape, described) ?? fallback;
}

function optionalPattern(env: Env, name: string, shape: RegExp, described: string): string | undefined {
  const value = env[name];
  if (value === undefined || value === "") return undefined;
  if (!shape.test(value)) throw new ConfigError(`${name} must be ${described}, got "${value}"`);
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = (env[name] ?? "").trim();
  if (raw === "") return fallback;
  if (raw === "true") return true;
  if (raw === "false") return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function num(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new ConfigError(`${name} must be a positive number, got "${raw}"`);
  return value;
}

/** An optional secret; a short one would be guessable, so it is refused rather than used. */
function secret(env: Env, name: string, minLength: number): string | undefined {
  const value = env[name];
  if (value === undefined || value === "") return undefined;
  if (value.length < minLength) throw new ConfigError(`${name} must be at least ${minLength} characters`);
  return value;
}

function int(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer in [${min}, ${max}], got "${raw}"`);
  }
  return value;
}

/** An integer setting that is off when unset or empty. */
function optionalInt(env: Env, name: string, min: number, max: number): number | undefined {
  return env[name] === undefined || env[name] === "" ? undefined : int(env, name, 0, min, max);
}

function url(env: Env, name: string, fallback: string): string {
  const value = str(env, name, fallback).replace(/\/+$/, "");
  if (!URL.canParse(value)) throw new ConfigError(`${name} must be an absolute URL, got "${value}"`);
  return value;
}

function list(env: Env, name: string): string[] {
  return (env[name] ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

const PROXY_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

/** TRUST_PROXY: off, a hop count, or proxy addresses; "true"/"all" (anyone may claim any address) is refused. */
function trustProxy(env: Env): false | number | string[] {
  const raw = (env.TRUST_PROXY ?? "").trim();
  if (raw === "" || raw === "false") return false;
  if (/^\d+$/.test(raw)) {
    const hops = int(env, "TRUST_PROXY", 0, 0, 32);
    return hops === 0 ? false : hops;
  }
  const entries = list(env, "TRUST_PROXY");
  for (const entry of entries) {
    if (PROXY_NAMES.has(entry)) continue;
    const [address, prefix, ...extra] = entry.split("/");
    const family = isIP(address ?? "");
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || extra.length > 0) {
      throw new ConfigError(`TRUST_PROXY must be a hop count or comma-separated IPs/CIDRs/loopback/linklocal/uniquelocal, got "${entry}"`);
    }
  }
  return entries;
}
