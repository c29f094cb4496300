import type { ProviderUnavailableError } from "@gen/providers";

/** The shortest wait before a step is run again, whatever the provider asked: never a busy loop. */
const MIN_WAIT_MS = 250;
/** The longest wait one step honours: a provider asking for an hour is asked again after a minute. */
const MAX_RETRY_AFTER_MS = 60_000;
/** A 429 that did not say how long to wait. */
const DEFAULT_QUOTA_WAIT_MS = 1_000;
/** The longest pause between two submits of a task whose routes all answered 5xx or a network error. */
const MAX_SUBMIT_RETRY_MS = 5_000;

/** A Retry-After (or a default) kept within bounds. */
export function boundedRetryAfter(retryAfterMs: number): number {
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(MIN_WAIT_MS, retryAfterMs));
}

/**
 * The wait a provider asked for: its Retry-After, or a default for a 429 without one. Undefined
 * for an outage (5xx, network error), which the submit retry budget bounds instead.
 */
export function quotaWaitMs(error: ProviderUnavailableError): number | undefined {
  if (error.retryAfterMs !== undefined) return boundedRetryAfter(error.retryAfterMs);
  return error.upstream?.status === 429 ? DEFAULT_QUOTA_WAIT_MS : undefined;
}

/**
 * The pause before submitting again after an outage, a quarter of the task's age within bounds: a
 * function of the age alone, so a retry needs no counter and a worker taking over keeps the pace.
 */
export function submitRetryDelayMs(elapsedMs: number): number {
  return Math.round(Math.min(MAX_SUBMIT_RETRY_MS, Math.max(MIN_WAIT_MS, elapsedMs / 4)));
}
