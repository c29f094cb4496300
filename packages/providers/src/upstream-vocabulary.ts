// The words of the upstream's submit-then-poll protocol (packages/providers/README.md), not ours:
// a job `succeeded` upstream while our task is `completed`. The HTTP provider reads them and the
// upstream simulator (apps/upstream-sim) speaks them, so both name them here.

/** `status` of an upstream job (`GET /v1/jobs/{id}`). */
export const UpstreamJobStatus = {
  Queued: "queued",
  Running: "running",
  Succeeded: "succeeded",
  Failed: "failed",
  Canceled: "canceled",
} as const;

export type UpstreamJobStatus = (typeof UpstreamJobStatus)[keyof typeof UpstreamJobStatus];

/** `error.type` of an upstream answer; the HTTP provider acts on the first two. */
export const UpstreamErrorType = {
  ContentPolicy: "content_policy",
  InvalidInput: "invalid_input",
  Failed: "failed",
  ServerError: "server_error",
  NotFound: "not_found",
  BadFile: "bad_file",
} as const;

export type UpstreamErrorType = (typeof UpstreamErrorType)[keyof typeof UpstreamErrorType];
