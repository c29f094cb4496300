const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 1000;
const LONG_POLL_MS = 5000;

/**
 * How long to wait before the next poll of an upstream job `elapsedMs` old. As long as the job is
 * young, the wait is its age (so polls double from 25 ms: a short job is seen done soon after it
 * is), capped at a second. Past 10 s the wait is a tenth of its age, up to 5 s: a long job is
 * seen done at most about 10 % late, and a worker tracking thousands of them polls each only every
 * few seconds. A function of the age alone, so a job resumed by another worker keeps the schedule.
 */
export function pollDelayMs(elapsedMs: number): number {
  const cap = Math.min(LONG_POLL_MS, Math.max(MAX_POLL_MS, elapsedMs / 10));
  return Math.round(Math.min(cap, Math.max(FIRST_POLL_MS, elapsedMs)));
}
