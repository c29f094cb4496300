import { SpanKind, SpanStatusCode, context, trace, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";

/**
 * The process's tracer, set by startTracing; undefined while tracing is off, and then every helper
 * here calls straight through: no span, no context switch, no allocation on the hot paths.
 */
let tracer: Tracer | undefined;

export function setTracer(next: Tracer | undefined): void {
  tracer = next;
}

export const isTracing = (): boolean => tracer !== undefined;

/**
 * Runs `work` inside a span named `name`, a child of the active one, ended when `work` settles;
 * a rejection is recorded on the span and passed on. With tracing off, `work()` alone.
 */
export function inSpan<T>(name: string, attributes: Attributes, work: () => Promise<T>, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
  if (tracer === undefined) return work();
  return tracer.startActiveSpan(name, { kind, attributes }, (span) => settle(span, work));
}

/** As inSpan, the span's parent given (a context extracted from a request), not the active one. */
export function inSpanUnder<T>(parent: Context, name: string, attributes: Attributes, kind: SpanKind, work: (span: Span) => T): T {
  const span = tracer!.startSpan(name, { kind, attributes }, parent);
  return context.with(trace.setSpan(parent, span), () => work(span));
}

async function settle<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    recordFailure(span, error);
    throw error;
  } finally {
    span.end();
  }
}

function recordFailure(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** Adds attributes to the active span (a result known only at the end of a step); nothing when off. */
export function annotateSpan(attributes: Attributes): void {
  if (tracer === undefined) return;
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** The active span's ids for a log line (`trace_id`, `span_id`); undefined when off or outside a span. */
export function traceLogFields(): Record<string, string> | undefined {
  if (tracer === undefined) return undefined;
  const span = trace.getActiveSpan();
  if (span === undefined) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
