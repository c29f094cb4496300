import { context, propagation } from "@opentelemetry/api";
import { isTracing } from "./tracer.ts";

/**
 * The active trace context in the form BullMQ's telemetry carries in a job (`opts.telemetry.metadata`:
 * the W3C headers as JSON), for jobs added in a batch on behalf of several requests: each job is
 * then processed under its own request's trace rather than the batch's. Undefined with tracing off.
 */
export function jobTraceMetadata(): string | undefined {
  if (!isTracing()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent === undefined ? undefined : JSON.stringify(carrier);
}
