// The one list of public error codes (docs/api.md#error-codes).
// The HTTP layer maps every thrown ApiError through this table; nothing else picks a status.
export const ERROR_CATALOG = {
  10001: { status: 401, message: "Missing Authorization header" },
  10002: { status: 401, message: "Authorization header is not the Bearer form" },
  10003: { status: 401, message: "API key invalid" },
  10004: { status: 401, message: "API key revoked" },
  10005: { status: 401, message: "Sign-in required" },
  10006: { status: 403, message: "Request origin not allowed" },
  20001: { status: 400, message: "Body is not a JSON object" },
  20002: { status: 400, message: "Required parameter missing" },
  20003: { status: 400, message: "Parameter value invalid" },
  20004: { status: 400, message: "model not supported on this endpoint" },
  20005: { status: 400, message: "size not supported by this model" },
  20006: { status: 400, message: "quality not supported by this model" },
  20007: { status: 400, message: "prompt exceeds the maximum length" },
  20008: { status: 413, message: "Request body exceeds 1 MiB" },
  30001: { status: 402, message: "Insufficient credits" },
  30002: { status: 400, message: "Cannot determine pricing for this model" },
  40001: { status: 404, message: "Task not found" },
  40002: { status: 404, message: "Route not found" },
  50001: { status: 429, message: "Rate limit exceeded" },
  60001: { status: 500, message: "Failed to persist task; credits refunded" },
  60002: { status: 500, message: "Failed to start workflow; credits refunded" },
  60099: { status: 500, message: "Internal error" },
  70001: { status: 503, message: "Workflow service unavailable; retry" },
  70002: { status: 503, message: "Database unavailable" },
} as const satisfies Record<number, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "number" && Object.hasOwn(ERROR_CATALOG, value);
}
