import { ConfigError } from "./config-error.ts";
import type { TracingConfig, TracesSampler } from "./config.ts";

type Env = Record<string, string | undefined>;

const PROTOCOLS = ["http/protobuf", "http/json"] as const;
const SAMPLERS: readonly TracesSampler[] = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
];

/**
 * Tracing from OpenTelemetry's own variables, nothing of ours: on when an OTLP endpoint is named
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), unless OTEL_SDK_DISABLED=true
 * or OTEL_TRACES_EXPORTER=none. Off (undefined), nothing of OpenTelemetry is started. The exporter
 * reads the endpoint, headers, time-out, compression and certificates itself, as the specification
 * says; what is parsed here is what this service builds (protocol, sampler, batch delay) and what
 * must fail at start-up rather than at the first export.
 */
export function tracingConfig(env: Env): TracingConfig | undefined {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint === undefined || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  const exporter = (env.OTEL_TRACES_EXPORTER || "otlp").trim().toLowerCase();
  if (exporter === "none") return undefined;
  if (exporter !== "otlp") throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp or none, got "${exporter}"`);
  if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol)) {
    throw new ConfigError(`OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute http(s) URL, got "${endpoint}"`);
  }
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || "http/protobuf").trim();
  if (!(PROTOCOLS as readonly string[]).includes(protocol)) {
    throw new ConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL must be one of ${PROTOCOLS.join(", ")} (grpc is not shipped), got "${protocol}"`);
  }
  const sampler = (env.OTEL_TRACES_SAMPLER || "parentbased_always_on").trim().toLowerCase() as TracesSampler;
  if (!SAMPLERS.includes(sampler)) throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(", ")}, got "${sampler}"`);
  return {
    protocol: protocol as TracingConfig["protocol"],
    sampler,
    samplerRatio: ratio(env.OTEL_TRACES_SAMPLER_ARG),
    batchDelayMs: delay(env.OTEL_BSP_SCHEDULE_DELAY),
  };
}

function ratio(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return 1;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 1) throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio in [0, 1], got "${raw}"`);
  return value;
}

function delay(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return 5000;
  const value = /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(value) || value < 1 || value > 3_600_000)
    throw new ConfigError(`OTEL_BSP_SCHEDULE_DELAY must be milliseconds in [1, 3600000], got "${raw}"`);
  return value;
}
