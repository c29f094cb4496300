import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from "@opentelemetry/sdk-trace";
import type { TracingConfig } from "@gen/config";
import { setTracer } from "./tracer.ts";

export interface Tracing {
  /** Exports the spans still gathered and stops; a no-op when tracing is off. */
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry tracing for this process, or nothing when `config` is undefined (no OTLP
 * endpoint set). Called once, first thing in a process's main: `service.name` is `processName`
 * (gateway, worker, console) unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise.
 * No instrumentation of Node's HTTP client or of undici is installed: spans are made by hand, so
 * that no outgoing request (a webhook POST above all) ever gains a `traceparent` header.
 */
export function startTracing(config: TracingConfig | undefined, processName: string): Tracing {
  if (config === undefined) return { shutdown: async () => {} };
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": processName }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({
    resource,
    sampler: sampler(config),
    spanProcessors: [new BatchSpanProcessor({ exporter: exporter(config), scheduledDelayMillis: config.batchDelayMs })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracer(provider.getTracer("@gen/tracing"));
  return {
    shutdown: async () => {
      setTracer(undefined);
      await provider.shutdown().catch(() => {});
      // The API's globals back to no-ops, so that a process (a test) may start tracing again.
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

function exporter(config: TracingConfig): SpanExporter {
  // Endpoint (with /v1/traces appended to OTEL_EXPORTER_OTLP_ENDPOINT), headers, time-out and
  // compression come from the OTEL_EXPORTER_OTLP_* variables, read by the exporter itself.
  return config.protocol === "http/json" ? new JsonExporter() : new ProtobufExporter();
}

function sampler({ sampler: name, samplerRatio }: TracingConfig): Sampler {
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(samplerRatio);
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(samplerRatio) });
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}
