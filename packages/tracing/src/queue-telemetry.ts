import { INVALID_SPAN_CONTEXT, SpanKind, context, isSpanContextValid, trace, type Context } from "@opentelemetry/api";
import type { Telemetry } from "bullmq";
import { BullMQOTelSpan, BullMQOtel } from "bullmq-otel";
import { isTracing } from "./tracer.ts";

/**
 * BullMQ's own OpenTelemetry support (bullmq-otel), for a Queue's or a Worker's `telemetry` option:
 * an add is a PRODUCER span whose context travels in the job's options, and processing the job a
 * CONSUMER span under it, so a task's trace goes on across the queue hop. BullMQ also traces its
 * housekeeping (each empty fetch, the stalled-job check, closes) as INTERNAL spans; outside a trace
 * those would each start a trace of their own, so they are dropped unless a span is there to hang
 * them under. Undefined with tracing off: BullMQ then skips its tracing code entirely.
 */
// A dropped span's children (the stalled check's moves) are dropped too: its context is not valid.
const inTrace = (parent: Context): boolean => {
  const span = trace.getSpanContext(parent);
  return span !== undefined && isSpanContextValid(span);
};

export function queueTelemetry(): Telemetry | undefined {
  if (!isTracing()) return undefined;
  const otel = new BullMQOtel("bullmq");
  const unsampled = new BullMQOTelSpan(trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
  return {
    contextManager: otel.contextManager,
    tracer: {
      startSpan: (name, options, parent) =>
        options?.kind === SpanKind.INTERNAL && !inTrace(parent ?? context.active()) ? unsampled : otel.tracer.startSpan(name, options, parent),
    },
  };
}
