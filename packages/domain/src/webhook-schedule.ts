// A webhook gets this many scheduled attempts (docs/api.md#webhook-schedule); a manual redelivery
// is one more attempt outside the schedule.
export const SCHEDULED_ATTEMPTS = 3;

export type AttemptNo = 1 | 2 | 3;
