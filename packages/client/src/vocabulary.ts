// The API's values as this SDK knows them (docs/api.md#task-object, docs/api.md#webhook-object).
// The SDK is installed on its own, so it keeps its own copy; packages/client/test/vocabulary.test.ts
// fails when the service's lists move and this copy does not.

export const TASK_STATUSES = ["queued", "in_progress", "completed", "failed"] as const;

/** A task in one of these never changes again. */
export const TERMINAL_STATUSES = ["completed", "failed"] as const satisfies readonly (typeof TASK_STATUSES)[number][];

export const WEBHOOK_DELIVERY_STATUSES = ["pending", "in_progress", "delivered", "failed"] as const;

/** `last_error` values besides `http_<status>`. */
export const WEBHOOK_LAST_ERRORS = [
  "timeout",
  "connect_failed",
  "dns_failed",
  "tls_error",
  "blocked_private_address",
  "request_failed",
  "render_failed",
  "render_timeout",
  "stale_claim",
  "attempt_lost",
] as const;

export function isTerminalStatus(status: string): status is (typeof TERMINAL_STATUSES)[number] {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}
