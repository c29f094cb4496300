const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 1000;
const LONG_POLL_MS = 2000;
/**
 * While a callback is expected, polls only guard against a lost one. A minute: a lost callback
 * is made up for within it, and a job of up to a minute costs its submit and one poll (the one
 * its callback wakes, or this one when they meet), where every safety poll before the job ends
 * is a step spent on nothing.
 */
export const CALLBACK_SAFETY_POLL_MS = 60_000;
/** With a callback expected, the first safety poll comes no earlier than this share of expectedDurationMs. */
const CALLBACK_FIRST_POLL_SHARE = 1.25;
/** Past its expected end a job is polled this often at first, then every quarter of its overrun, up to LONG_POLL_MS. */
const OVERRUN_POLL_MS = 500;

/** What the schedule depends on: the task's row and its model, nothing held in memory, so a resumed job keeps it. */
export interface PollPlan {
  /** Time since the task started (its upstream job was submitted then). */
  elapsedMs: number;
  /** The model's catalog `expectedDurationMs`, if it has one. */
  expectedDurationMs?: number;
  /** The job was created with our callback address (the task's `upstream_callback`). */
  callback: boolean;
}

/**
 * How long to wait before the next poll of an upstream job.
 *
 * - A callback expected: polls are a safety net against a lost callback, every minute; with
 *   `expectedDurationMs`, the first one no earlier than 1.25 times it. A 60-s job costs its submit
 *   and the poll the callback wakes.
 * - `expectedDurationMs` without callbacks: the first poll at the expected end, then every 500 ms,
 *   widening to a quarter of the overrun, up to 2 s. A 60-s job costs a handful of polls instead of
 *   forty, at the price of a job that ends early being seen at its expected end.
 * - Neither: while the job is young the wait is its age (polls double from 25 ms: a short job is
 *   seen done soon after it is), capped at a second; past 10 s a tenth of its age, up to 2 s. A long
 *   job is seen done at most 2 s late, and a worker tracking thousands of them polls each only every
 *   couple of seconds (2,000 jobs of 60 s: about 0.3 ms of CPU per poll, bench/README.md).
 */
export function pollDelayMs(plan: PollPlan): number {
  // A clock that went backwards is a job that just started.
  const elapsed = Number.isFinite(plan.elapsedMs) ? Math.max(0, plan.elapsedMs) : 0;
  const expected = plan.expectedDurationMs;
  if (plan.callback) {
    const untilFirst = expected === undefined ? 0 : expected * CALLBACK_FIRST_POLL_SHARE - elapsed;
    return Math.round(Math.max(CALLBACK_SAFETY_POLL_MS, untilFirst));
  }
  if (expected !== undefined) {
    const remaining = expected - elapsed;
    if (remaining > 0) return Math.round(Math.max(FIRST_POLL_MS, remaining));
    return Math.round(Math.min(LONG_POLL_MS, Math.max(OVERRUN_POLL_MS, -remaining / 4)));
  }
  const cap = Math.min(LONG_POLL_MS, Math.max(MAX_POLL_MS, elapsed / 10));
  return Math.round(Math.min(cap, Math.max(FIRST_POLL_MS, elapsed)));
}
