import { ERROR_CATALOG, type ErrorCode } from "./error-catalog.ts";

/** A failure the client is meant to see: a catalog code, an optional specific message and headers. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message?: string, headers: Record<string, string> = {}) {
    super(message ?? ERROR_CATALOG[code].message);
    this.name = "ApiError";
    this.code = code;
    this.status = ERROR_CATALOG[code].status;
    this.headers = headers;
  }
}
