// The words of fal's queue API (its public API reference), not ours: the fal adapter reads them
// and the fal wire simulator (apps/upstream-sim) speaks them, so both name them here.

/** fal's default queue base; catalog `upstreamUrl` replaces it. */
export const FAL_QUEUE_BASE = "https://queue.fal.run";

/** `status` of a queued request (`GET {base}/{app}/requests/{id}/status`). */
export const FalQueueStatus = {
  InQueue: "IN_QUEUE",
  InProgress: "IN_PROGRESS",
  Completed: "COMPLETED",
} as const;

export type FalQueueStatus = (typeof FalQueueStatus)[keyof typeof FalQueueStatus];

/** `status` of the body fal POSTs to a request's `fal_webhook`. */
export const FalWebhookStatus = {
  Ok: "OK",
  Error: "ERROR",
} as const;

export type FalWebhookStatus = (typeof FalWebhookStatus)[keyof typeof FalWebhookStatus];

/** `type` of an entry of a 422 answer's `detail` when a content checker refused the input or output. */
export const FAL_CONTENT_POLICY_TYPE = "content_policy_violation";

/** The header carrying fal's id of a request, to quote to its support. */
export const FAL_REQUEST_ID_HEADER = "x-fal-request-id";
