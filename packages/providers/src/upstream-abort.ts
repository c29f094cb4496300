/** The caller's abort reason when it aborted, so an abort is never mistaken for an upstream fault. */
export function abortReason(signal: AbortSignal | undefined, error: unknown): unknown {
  return signal?.aborted ? (signal.reason ?? error) : undefined;
}

/** Text for a failed exchange, naming the cap when the answer was too large. */
export function describeFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return error instanceof Error && error.name === "AnswerTooLargeError" ? `the answer's ${message}` : message;
}
