// Traces across processes: the real gateway and worker, each exporting OTLP/HTTP JSON to a collector
// on loopback. A submission carrying a client's `traceparent` continues that trace through the
// gateway, the queue hop, the generation steps, the settlement and the webhook attempt; the webhook
// POST itself carries no trace header (the contract allows no service-specific headers).
import { randomBytes } from "node:crypto";
import type { AppProcess } from "../faults/support/app-process.ts";
import { startFaultStack, type FaultStack } from "../faults/support/fault-stack.ts";
import { describeWithReceiver, startHookReceiver, type HookReceiver } from "../faults/support/hook-receiver.ts";
import { until } from "../faults/support/load.ts";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.ts";
import { createScratchDatabase, type ScratchDatabase } from "../support/scratch-database.ts";

/** The JSON lines an app process wrote lately (AppProcess.tail: `  [label] line`). */
const logLines = (app: AppProcess): Record<string, unknown>[] =>
  app
    .tail()
    .split("\n")
    .map((line) => line.replace(/^\s*\[[^\]]+\] /, ""))
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

let database: ScratchDatabase | undefined;
let hooks: HookReceiver | undefined;
let collector: OtlpReceiver | undefined;
let stack: FaultStack | undefined;

describeWithReceiver("OpenTelemetry traces from the client's traceparent to the delivered webhook", () => {
  beforeAll(async () => {
    hooks = await startHookReceiver();
    collector = await startOtlpReceiver();
    database = await createScratchDatabase();
    stack = await startFaultStack({
      databaseUrl: database.url,
      redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      env: {
        ...hooks.childEnv,
        LOG_LEVEL: "info",
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_BSP_SCHEDULE_DELAY: "100",
      },
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await hooks?.close();
    await collector?.close();
    await database?.drop();
  });

  test("one trace: gateway and worker spans under the client's trace id; the POST has no trace header", async () => {
    const { auth } = await stack!.user();
    const traceId = randomBytes(16).toString("hex");
    const clientSpanId = randomBytes(8).toString("hex");
    const answer = await fetch(`${stack!.baseUrl}/api/v1/detect`, {
      method: "POST",
      headers: { Authorization: auth, "Content-Type": "application/json", traceparent: `00-${traceId}-${clientSpanId}-01` },
      body: JSON.stringify({ model: "sim-detect-1", text: "trace me [[sim:delay_ms=300]]", webhook_url: hooks!.url }),
    });
    expect(answer.status).toBe(202);
    const taskId = ((await answer.json()) as { id: string }).id;
    await until(async () => (hooks!.posts.get(taskId)?.length ?? 0) > 0, 20_000, "the webhook POST");
    expect(hooks!.posts.get(taskId)![0]!.headerNames.sort()).toEqual(["connection", "content-length", "content-type", "host", "user-agent"]);

    const inTrace = () => collector!.spans().filter((span) => span.traceId === traceId);
    const named = (service: string, name: string) => inTrace().find((span) => span.service === service && span.name === name);
    // A parent span ends after its children, so it can come in a later export batch than they do:
    // the trace is complete once every span's parent has come too.
    const orphans = () => {
      const spans = inTrace();
      const ids = new Set([clientSpanId, ...spans.map((span) => span.spanId)]);
      return spans.filter((span: ReceivedSpan) => !ids.has(span.parentSpanId));
    };
    await until(
      async () => named("worker", "webhook.attempt") !== undefined && named("gateway", "POST /api/v1/detect") !== undefined && orphans().length === 0,
      20_000,
      "the spans exported",
    );

    const spans = inTrace();
    const request = named("gateway", "POST /api/v1/detect")!;
    // The client's span is the request's parent: the client's trace goes on.
    expect(request.parentSpanId).toBe(clientSpanId);
    expect(request.kind).toBe(2); // SERVER
    expect(request.attributes["http.response.status_code"]).toBe(202);
    const submit = named("gateway", "task.submit")!;
    expect(submit.parentSpanId).toBe(request.spanId);
    expect(submit.attributes["gen.task_id"]).toBe(taskId);

    // Across the queue hop: BullMQ's consumer span is a child of the submission's span.
    const processed = spans.filter((span) => span.service === "worker" && span.kind === 5); // CONSUMER
    expect(processed.some((span) => span.parentSpanId === submit.spanId)).toBe(true);
    const worker = new Set(spans.filter((span) => span.service === "worker").map((span) => span.name));
    for (const name of ["generation.step", "provider.submit", "task.settle", "webhook.attempt"]) expect(worker).toContain(name);
    const step = spans.find((span) => span.name === "generation.step" && span.attributes["gen.request_id"] !== undefined)!;
    expect(step.attributes["gen.task_id"]).toBe(taskId);
    expect(step.attributes["gen.request_id"]).toBe(request.attributes["gen.request_id"]);
    expect(named("worker", "webhook.attempt")!.attributes["gen.outcome"]).toBe("delivered");
    // Every span of the trace hangs from another span of it, or from the client's.
    expect(orphans()).toEqual([]);

    // The log lines of the request and of the task name both ids and the trace.
    const requestId = request.attributes["gen.request_id"];
    const requestLine = logLines(stack!.gateway).find((line) => line.message === "request" && line.task_id === taskId)!;
    expect(requestLine).toMatchObject({ request_id: requestId, trace_id: traceId, span_id: request.spanId });
    const finished = await until(async () => logLines(stack!.workers[0]!).find((line) => line.message === "task finished" && line.task_id === taskId), 10_000);
    expect(finished).toMatchObject({ request_id: requestId, trace_id: traceId });
    expect(spans.some((span) => span.spanId === String(finished.span_id))).toBe(true);
  }, 60_000);
});
