/** Base of every error the client throws; `retryable` follows the contract's retry guidance. */
export class GenError extends Error {
  readonly retryable: boolean;

  constructor(message: string, retryable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "GenError";
    this.retryable = retryable;
  }
}

/** A non-2xx answer of the API, decoded from the error envelope. */
export class GenApiError extends GenError {
  readonly status: number;
  /** The 5-digit code of the envelope; null when the answer carried no envelope (e.g. a proxy's 502). */
  readonly code: number | null;
  /** `req_…` from the envelope, or else the `X-Request-Id` header: quote it in support reports. */
  readonly requestId: string | null;
  /** The wait the server asked for (`Retry-After`), in milliseconds. */
  readonly retryAfterMs: number | null;

  constructor(init: { status: number; code: number | null; message: string; requestId: string | null; retryAfterMs: number | null }) {
    super(init.message, isRetryableStatus(init.status));
    this.name = "GenApiError";
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** The request never got an HTTP answer (connection refused or reset, DNS, truncated body). */
export class GenConnectionError extends GenError {
  constructor(message: string, cause: unknown) {
    super(message, true, { cause });
    this.name = "GenConnectionError";
  }
}

/** `waitForTask` gave up: the task was still running when the time ran out. */
export class GenTimeoutError extends GenError {
  readonly taskId: string;
  readonly lastStatus: string | null;

  constructor(taskId: string, timeoutMs: number, lastStatus: string | null) {
    super(`task ${taskId} not finished after ${timeoutMs} ms (last status: ${lastStatus ?? "unknown"})`, false);
    this.name = "GenTimeoutError";
    this.taskId = taskId;
    this.lastStatus = lastStatus;
  }
}

/**
 * docs/api.md#retry-guidance: 429 after Retry-After; 500 (60099 is idempotent, and 60001/60002
 * freed the Idempotency-Key, so re-sending the same key is a re-submission); 502/503/504 with
 * backoff. 400/401/402/403/404/413 need a fixed request.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 500 || status === 502 || status === 503 || status === 504;
}
