import { ERROR_CATALOG, WORKFLOW_CATALOG } from "@gen/errors";
import { ERROR_CODES } from "./error-schemas.ts";

/** The document's `info.description`: the error tables (from @gen/errors) and how tasks work. */
export function documentDescription(): string {
  const errors = ERROR_CODES.map((code) => `| ${code} | ${ERROR_CATALOG[code].status} | ${ERROR_CATALOG[code].message} |`);
  const workflow = Object.entries(WORKFLOW_CATALOG).map(([code, entry]) => `| ${code} | ${entry.message} |`);
  return [
    "Submit generation and analysis jobs as tasks; each submission answers 202 with the task and a `Location` to poll.",
    "A task finishes as `completed` or `failed`; polling `GET /api/v1/tasks/{id}` answers 200 in both cases.",
    "With `webhook_url`, one POST with the task body is sent when the task finishes (see `webhooks`): at least once, at most 3 attempts; deduplicate on the task id.",
    "",
    'Every response carries `X-Request-Id`. Errors use one envelope, `{"error":{"code","message","request_id"}}`; the HTTP status follows from the code.',
    "An unknown path or method under `/api/v1` answers 404 with 40002. Polling and submissions are rate limited per user (429, 50001, `Retry-After`).",
    "",
    "| Code | HTTP | Meaning |",
    "|---|---|---|",
    ...errors,
    "",
    "Workflow codes appear only as `error.code` of a failed task (polling and webhook body), never as an HTTP status:",
    "",
    "| Code | Meaning |",
    "|---|---|",
    ...workflow,
    "",
    "Retry: 400, 401, 402, 404: no, fix the request. 429: after `Retry-After`. 500 with 60001/60002: credits were refunded, re-submit. " +
      "500 with 60099: safe to retry (use `Idempotency-Key`). 502, 503, 504: with exponential backoff.",
  ].join("\n");
}
