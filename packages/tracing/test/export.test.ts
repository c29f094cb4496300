import http from "node:http";
import { loadConfig } from "@gen/config";
import { startOtlpReceiver, type OtlpReceiver } from "../../../test/support/otlp-receiver.ts";
import { inSpan, jobTraceMetadata, queueTelemetry, startTracing, traceLogFields, traceRequests } from "../src/index.ts";

let collector: OtlpReceiver;
const saved = { ...process.env };

beforeAll(async () => {
  collector = await startOtlpReceiver();
});
afterEach(() => {
  for (const key of Object.keys(process.env)) if (key.startsWith("OTEL_")) delete process.env[key];
  Object.assign(process.env, saved);
});
afterAll(() => collector.close());

/** The exporters and the resource read the OTEL_* variables from the environment themselves. */
function tracingFrom(env: Record<string, string>) {
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, ...env });
  return loadConfig(process.env).tracing;
}

test("off: no middleware, no BullMQ telemetry, no job context, no log fields; work runs as is", async () => {
  const tracing = startTracing(loadConfig({}).tracing, "gateway");
  expect(traceRequests({ requestId: () => "req_1" })).toEqual([]);
  expect(queueTelemetry()).toBeUndefined();
  expect(jobTraceMetadata()).toBeUndefined();
  expect(await inSpan("step", {}, async () => traceLogFields())).toBeUndefined();
  await tracing.shutdown();
});

test("http/protobuf: spans reach the collector at /v1/traces, the process's own service.name", async () => {
  const tracing = startTracing(tracingFrom({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" }), "worker");
  const fields = await inSpan("provider.submit", { "gen.provider": "simulated" }, async () => traceLogFields());
  await tracing.shutdown();
  const request = collector.requests.at(-1)!;
  expect(request).toMatchObject({ path: "/v1/traces", contentType: "application/x-protobuf" });
  // Protobuf carries ids as raw bytes, names as UTF-8.
  expect(request.body.includes(Buffer.from(fields!.trace_id!, "hex"))).toBe(true);
  expect(request.body.includes(Buffer.from("provider.submit"))).toBe(true);
  expect(request.body.includes(Buffer.from("worker"))).toBe(true);
});

test("http/json: OTEL_SERVICE_NAME overrides the process's name; a failed step is an error span", async () => {
  const tracing = startTracing(tracingFrom({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_SERVICE_NAME: "gen-worker-eu" }), "worker");
  await expect(inSpan("storage.store_outputs", {}, () => Promise.reject(new Error("disk full")))).rejects.toThrow("disk full");
  await tracing.shutdown();
  const span = collector.spans().find((s) => s.name === "storage.store_outputs")!;
  expect(span.service).toBe("gen-worker-eu");
  const raw = JSON.parse(collector.requests.at(-1)!.body.toString("utf8"));
  expect(JSON.stringify(raw)).toContain("disk full");
});

test("a request's span continues the client's traceparent; a malformed one starts a new trace", async () => {
  const tracing = startTracing(tracingFrom({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }), "gateway");
  const [trace] = traceRequests<http.ServerResponse>({ requestId: () => "req_test" });
  const server = http.createServer((req, res) => trace!(req, res, () => res.end(JSON.stringify(traceLogFields() ?? {}))));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/api/v1/tasks/task_1?secret=x`;
  const client = "0af7651916cd43dd8448eb211c80319c";
  const continued = (await (await fetch(url, { headers: { traceparent: `00-${client}-b7ad6b7169203331-01` } })).json()) as Record<string, string>;
  const fresh = (await (await fetch(url, { headers: { traceparent: "00-zz-not-a-trace-parent" } })).json()) as Record<string, string>;
  // A hostile tracestate (60 entries, 7 KB) is cut to the specification's limits, never a failure.
  const tracestate = Array.from({ length: 60 }, (_, i) => `k${i}=${"v".repeat(120)}`).join(",");
  const hostile = await fetch(url, { headers: { traceparent: `00-${client}-b7ad6b7169203331-01`, tracestate } });
  expect(hostile.status).toBe(200);
  expect(((await hostile.json()) as Record<string, string>).trace_id).toBe(client);
  server.close();
  await tracing.shutdown();
  expect(continued.trace_id).toBe(client);
  expect(fresh.trace_id).toMatch(/^[0-9a-f]{32}$/);
  expect(fresh.trace_id).not.toBe(client);
  const spans = collector.spans().filter((s) => s.kind === 2);
  const first = spans.find((s) => s.traceId === client)!;
  expect(first).toMatchObject({ parentSpanId: "b7ad6b7169203331", service: "gateway" });
  // Never the query string.
  expect(first.attributes).toMatchObject({ "url.path": "/api/v1/tasks/task_1", "gen.request_id": "req_test", "http.response.status_code": 200 });
});
