export { startTracing, type Tracing } from "./start-tracing.ts";
export { annotateSpan, inSpan, traceLogFields } from "./tracer.ts";
export { traceRequests } from "./trace-requests.ts";
export { queueTelemetry } from "./queue-telemetry.ts";
export { jobTraceMetadata } from "./job-trace.ts";
