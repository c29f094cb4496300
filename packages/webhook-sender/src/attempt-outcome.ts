/**
 * The `last_error` values one delivery attempt can produce on the wire
 * (docs/api.md#webhook-last-error-values). `render_*`, `stale_claim` and `attempt_lost` belong to
 * the delivery worker.
 */
export type LastError =
  | `http_${number}`
  | "timeout"
  | "connect_failed"
  | "dns_failed"
  | "tls_error"
  | "blocked_private_address"
  | "request_failed";

export type AttemptOutcome =
  | { ok: true; status: number }
  | {
      ok: false;
      lastError: LastError;
      /** The response status, only for `http_<status>`; null otherwise. */
      status: number | null;
      /** For operator logs only (error code and message, blocked address); never sent to callers. */
      detail?: string;
    };
