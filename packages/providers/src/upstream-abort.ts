import { causeMessage, type UpstreamCause } from "./upstream-cause.ts";

/** The caller's abort reason when it aborted, so an abort is never mistaken for an upstream fault. */
export function abortReason(signal: AbortSignal | undefined, error: unknown): unknown {
  return signal?.aborted ? (signal.reason ?? error) : undefined;
}

/** Text for a failed exchange, naming the cap when the answer was too large. */
export function describeFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return error instanceof Error && error.name === "AnswerTooLargeError" ? `the answer's ${message}` : message;
}

/** A request that got no answer, for the operator: the error's text and, for a network error, its code. */
export function networkCause(error: unknown): UpstreamCause {
  const root = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = (root as { code?: unknown } | null)?.code ?? (root as { cause?: { code?: unknown } } | null)?.cause?.code;
  const message = causeMessage(describeFailure(root));
  return { ...(message === undefined ? {} : { message }), ...(typeof code === "string" ? { code } : {}) };
}
