// Every `last_error` value a delivery attempt can record (docs/api.md#webhook-last-error-values).

/** Produced on the wire by one HTTP attempt. */
export const WireError = {
  Timeout: "timeout",
  ConnectFailed: "connect_failed",
  DnsFailed: "dns_failed",
  TlsError: "tls_error",
  BlockedPrivateAddress: "blocked_private_address",
  RequestFailed: "request_failed",
} as const;

/** Produced by the delivery worker without (or instead of) sending. */
export const WorkerError = {
  RenderFailed: "render_failed",
  RenderTimeout: "render_timeout",
  StaleClaim: "stale_claim",
  AttemptLost: "attempt_lost",
} as const;

export type HttpStatusError = `http_${number}`;
export type WireLastError = HttpStatusError | (typeof WireError)[keyof typeof WireError];
export type WorkerLastError = (typeof WorkerError)[keyof typeof WorkerError];
export type LastError = WireLastError | WorkerLastError;

export const httpStatusError = (status: number): HttpStatusError => `http_${status}`;

/** Every value but `http_<status>`: what the API schema, the SDK and the CHECK constraint enumerate. */
export const FIXED_LAST_ERRORS: readonly Exclude<LastError, HttpStatusError>[] = [...Object.values(WireError), ...Object.values(WorkerError)];

/** `http_<status>` spelled out: a status is three digits. Valid as JSON Schema, SQL and RegExp. */
export const HTTP_STATUS_ERROR_PATTERN = "^http_[0-9]{3}$";

/** The fixed values, in the order the console and the API docs list them (`http_<status>` first). */
export const LAST_ERROR_NAMES: readonly string[] = ["http_<status>", ...FIXED_LAST_ERRORS];
