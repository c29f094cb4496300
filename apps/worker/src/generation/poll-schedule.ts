const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 1000;
const LONG_POLL_MS = 2000;

/**
 * How long to wait before the next poll of an upstream job `elapsedMs` old. As long as the job is
 * young, the wait is its age (so polls double from 25 ms: a short job is seen done soon after it
 * is), capped at a second. Past 10 s the wait is a tenth of its age, up to 2 s: a long job is
 * seen done at most 2 s late, and a worker tracking thousands of them polls each only every
 * couple of seconds (2,000 jobs of 60 s: about 0.3 ms of CPU per poll, bench/README.md). A function of the age alone, so a job resumed by another worker keeps the schedule.
 */
export function pollDelayMs(elapsedMs: number): number {
  const cap = Math.min(LONG_POLL_MS, Math.max(MAX_POLL_MS, elapsedMs / 10));
  return Math.round(Math.min(cap, Math.max(FIRST_POLL_MS, elapsedMs)));
}
