/**
 * Runs `task` once the simulator's clock reads `at` or later. Node's timers run on a monotonic
 * clock that can fire a millisecond before Date.now() reaches the same instant, so a webhook timed
 * for exactly a job's end could render the job as still running; such a timer is set again for
 * what is left.
 */
export function runAt(at: number, now: () => number, task: () => void): void {
  const left = at - now();
  if (left <= 0) {
    task();
    return;
  }
  setTimeout(() => runAt(at, now, task), left).unref();
}
