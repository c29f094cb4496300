import type { UpstreamCause } from "./upstream-cause.ts";

/**
 * A submit or poll that got no usable answer (network error, timeout, 429, 5xx). Transient: the
 * task is not failed by it. A poll is repeated until the task's wall-clock cap (80002); a submit
 * is retried within the worker's budget or moved to the model's next fallback. `retryAfterMs` is
 * the wait the provider asked for (Retry-After), which the worker honours.
 */
export class ProviderUnavailableError extends Error {
  readonly retryAfterMs?: number;
  readonly upstream?: UpstreamCause;

  constructor(message: string, options?: { cause?: unknown; retryAfterMs?: number; upstream?: UpstreamCause }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ProviderUnavailableError";
    if (options?.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options?.upstream !== undefined) this.upstream = options.upstream;
  }
}
