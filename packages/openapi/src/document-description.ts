import { ERROR_CATALOG, WORKFLOW_CATALOG } from "@gen/errors";

/**
 * The document's `info.description`: how tasks work, in a few lines. /docs shows it above the
 * operations, so the code tables live with their schemas (`ErrorCode`, `WorkflowCode`) further down.
 */
export function documentDescription(): string {
  return [
    "Submit generation and analysis jobs as tasks; each submission answers 202 with the task and a `Location` to poll.",
    "A task finishes as `completed` or `failed`; polling `GET /api/v1/tasks/{id}` answers 200 in both cases.",
    "With `webhook_url`, one POST with the task body is sent when the task finishes (see `webhooks`): at least once, at most 3 attempts; deduplicate on the task id.",
    "`GET /api/v1/models` lists the models with their parameters and pricing; `GET /api/v1/tasks` lists your tasks.",
    "",
    'Every response carries `X-Request-Id`. Errors use one envelope, `{"error":{"code","message","request_id"}}`; the HTTP status follows from the code ' +
      "(the `ErrorCode` schema lists every code; a failed task's `error.code` is a `WorkflowCode`). Polling and submissions are rate limited per user (429, 50001, `Retry-After`).",
  ].join("\n");
}

/** The description of the `ErrorCode` schema: every code with its HTTP status, and the retry advice. */
export function errorCodeDescription(): string {
  return [
    "Five digits; the leading digit is the category. The HTTP status follows from the code. An unknown path or method under `/api/v1` answers 404 with 40002.",
    "",
    "| Code | HTTP | Meaning |",
    "|---|---|---|",
    ...Object.entries(ERROR_CATALOG).map(([code, entry]) => `| ${code} | ${entry.status} | ${entry.message} |`),
    "",
    "Retry: 400, 401, 402, 404: no, fix the request. 429: after `Retry-After`. 500 with 60001/60002: credits were refunded, re-submit. " +
      "500 with 60099: safe to retry (use `Idempotency-Key`). 502, 503, 504: with exponential backoff.",
  ].join("\n");
}

/** The description of the `WorkflowCode` schema: every code a failed task may carry. */
export function workflowCodeDescription(): string {
  return [
    "Why a task failed: only as `error.code` of a failed task (polling and webhook body), never as an HTTP status (polling a failed task returns 200).",
    "",
    "| Code | Meaning |",
    "|---|---|",
    ...Object.entries(WORKFLOW_CATALOG).map(([code, entry]) => `| ${code} | ${entry.message} |`),
  ].join("\n");
}
