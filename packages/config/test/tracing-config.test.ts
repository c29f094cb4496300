import { ConfigError, loadConfig } from "../src/index.ts";

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };

describe("tracing from the OTEL_* variables", () => {
  it("is off unless an OTLP endpoint is named", () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_SERVICE_NAME: "x", OTEL_TRACES_SAMPLER: "always_on", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }).tracing).toBeUndefined();
  });

  it("takes the specification's defaults once on", () => {
    expect(loadConfig(ENDPOINT).tracing).toEqual({ protocol: "http/protobuf", sampler: "parentbased_always_on", samplerRatio: 1, batchDelayMs: 5000 });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/v1/traces" }).tracing?.protocol).toBe("http/protobuf");
  });

  it("reads the protocol, the sampler, its ratio and the batch delay; the traces-only protocol wins", () => {
    const env = {
      ...ENDPOINT,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
      OTEL_BSP_SCHEDULE_DELAY: "200",
    };
    expect(loadConfig(env).tracing).toEqual({ protocol: "http/json", sampler: "parentbased_traceidratio", samplerRatio: 0.25, batchDelayMs: 200 });
  });

  it.each([{ OTEL_SDK_DISABLED: "true" }, { OTEL_SDK_DISABLED: " TRUE " }, { OTEL_TRACES_EXPORTER: "none" }])("%p turns it off", (env) => {
    expect(loadConfig({ ...ENDPOINT, ...env }).tracing).toBeUndefined();
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, /OTEL_EXPORTER_OTLP_PROTOCOL must be one of http\/protobuf, http\/json/],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: "http/xml" }, /OTEL_EXPORTER_OTLP_PROTOCOL/],
    [{ OTEL_TRACES_EXPORTER: "zipkin" }, /OTEL_TRACES_EXPORTER must be otlp or none/],
    [{ OTEL_TRACES_SAMPLER: "sometimes" }, /OTEL_TRACES_SAMPLER must be one of/],
    [{ OTEL_TRACES_SAMPLER_ARG: "1.5" }, /OTEL_TRACES_SAMPLER_ARG must be a ratio/],
    [{ OTEL_TRACES_SAMPLER_ARG: "NaN" }, /OTEL_TRACES_SAMPLER_ARG/],
    [{ OTEL_BSP_SCHEDULE_DELAY: "-1" }, /OTEL_BSP_SCHEDULE_DELAY/],
    [{ OTEL_BSP_SCHEDULE_DELAY: "1e3" }, /OTEL_BSP_SCHEDULE_DELAY/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, /OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute http\(s\) URL/],
  ])("refuses %p at start-up", (env, message) => {
    expect(() => loadConfig({ ...ENDPOINT, ...env })).toThrow(ConfigError);
    expect(() => loadConfig({ ...ENDPOINT, ...env })).toThrow(message);
  });
});
