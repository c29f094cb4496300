// A webhook gets this many scheduled attempts (docs/api.md#webhook-delivery-schedule); a manual redelivery
// is one more attempt outside the schedule.
export const SCHEDULED_ATTEMPTS = 3;

export type AttemptNo = 1 | 2 | 3;

/** docs/api.md#webhook-last-error-values: building an attempt's body gets 2 s (the task row is read by the claim). */
export const RENDER_TIMEOUT_MS = 2_000;
