/**
 * A poll that got no usable answer (network error, timeout, 5xx). Transient: the task is not
 * failed by it; the worker polls again until its wall-clock cap (80002).
 */
export class ProviderUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ProviderUnavailableError";
  }
}
