import { Err } from "./error-codes.ts";

// The one list of public error codes (docs/api.md#error-codes).
// The HTTP layer maps every thrown ApiError through this table; nothing else picks a status.
export const ERROR_CATALOG = {
  [Err.MissingAuthorization]: { status: 401, message: "Missing Authorization header" },
  [Err.NotBearer]: { status: 401, message: "Authorization header is not the Bearer form" },
  [Err.KeyInvalid]: { status: 401, message: "API key invalid" },
  [Err.KeyRevoked]: { status: 401, message: "API key revoked" },
  [Err.SignInRequired]: { status: 401, message: "Sign-in required" },
  [Err.OriginNotAllowed]: { status: 403, message: "Request origin not allowed" },
  [Err.BodyNotObject]: { status: 400, message: "Body is not a JSON object" },
  [Err.ParameterMissing]: { status: 400, message: "Required parameter missing" },
  [Err.ParameterInvalid]: { status: 400, message: "Parameter value invalid" },
  [Err.ModelNotSupported]: { status: 400, message: "model not supported on this endpoint" },
  [Err.SizeNotSupported]: { status: 400, message: "size not supported by this model" },
  [Err.QualityNotSupported]: { status: 400, message: "quality not supported by this model" },
  [Err.PromptTooLong]: { status: 400, message: "prompt exceeds the maximum length" },
  [Err.BodyTooLarge]: { status: 413, message: "Request body exceeds 1 MiB" },
  [Err.InsufficientCredits]: { status: 402, message: "Insufficient credits" },
  [Err.PricingUnknown]: { status: 400, message: "Cannot determine pricing for this model" },
  [Err.TaskNotFound]: { status: 404, message: "Task not found" },
  [Err.RouteNotFound]: { status: 404, message: "Route not found" },
  [Err.RateLimited]: { status: 429, message: "Rate limit exceeded" },
  [Err.PersistFailed]: { status: 500, message: "Failed to persist task; credits refunded" },
  [Err.WorkflowStartFailed]: { status: 500, message: "Failed to start workflow; credits refunded" },
  [Err.Internal]: { status: 500, message: "Internal error" },
  [Err.WorkflowUnavailable]: { status: 503, message: "Workflow service unavailable; retry" },
  [Err.DatabaseUnavailable]: { status: 503, message: "Database unavailable" },
} as const satisfies Record<number, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "number" && Object.hasOwn(ERROR_CATALOG, value);
}
