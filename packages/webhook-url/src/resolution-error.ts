export const RESOLUTION_FAILED_CODE = "ERR_WEBHOOK_RESOLUTION_FAILED";

/**
 * Wraps whatever the resolver reported (or an empty answer), so that any failure of name
 * resolution is `dns_failed`, even from an injected resolver whose errors carry no `code`.
 */
export class ResolutionError extends Error {
  readonly code = RESOLUTION_FAILED_CODE;

  constructor(
    readonly host: string,
    cause?: unknown,
  ) {
    super(`resolving ${host} failed: ${describeCause(cause)}`, { cause });
    this.name = "ResolutionError";
  }
}

function describeCause(cause: unknown): string {
  if (cause === undefined) return "no addresses";
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === "string" ? `${code} ${cause.message}` : cause.message;
  }
  return String(cause);
}
