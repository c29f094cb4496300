import { CALLBACK_SAFETY_POLL_MS, pollDelayMs, type PollPlan } from "../src/generation/poll-schedule.ts";

const generic = (elapsedMs: number) => pollDelayMs({ elapsedMs, callback: false });

/** The poll times of a job that runs `runMs`, polled by the schedule from its submit (t = 0) until it is seen done. */
function pollTimes(runMs: number, plan: Omit<PollPlan, "elapsedMs">): number[] {
  const times: number[] = [];
  for (let t = 0; ;) {
    t += pollDelayMs({ ...plan, elapsedMs: t });
    times.push(t);
    if (t >= runMs) return times;
  }
}

test("without callbacks or an expected duration: polls double from 25 ms while a job is young, then follow a tenth of its age up to 2 s", () => {
  expect([0, 10, 25, 60, 400, 999, 5000, 10_000].map(generic)).toEqual([25, 25, 25, 60, 400, 999, 1000, 1000]);
  expect([15_000, 20_000, 60_000, 600_000].map(generic)).toEqual([1500, 2000, 2000, 2000]);
  // A 60-s job: about forty polls.
  expect(pollTimes(60_000, { callback: false }).length).toBeGreaterThan(35);
});

test("with expectedDurationMs: the first poll at the expected end, then polls tighten to 500 ms, widening with the overrun up to 2 s", () => {
  const plan = { expectedDurationMs: 60_000, callback: false };
  expect(pollDelayMs({ ...plan, elapsedMs: 0 })).toBe(60_000);
  expect(pollDelayMs({ ...plan, elapsedMs: 150 })).toBe(59_850);
  expect(pollDelayMs({ ...plan, elapsedMs: 59_990 })).toBe(25);
  expect([60_000, 61_000, 62_000, 64_000, 68_000, 120_000].map((elapsedMs) => pollDelayMs({ ...plan, elapsedMs }))).toEqual([500, 500, 500, 1000, 2000, 2000]);
  // A 60-s job is seen done within half a second, after two polls; one 3 s late after a handful.
  expect(pollTimes(60_000, plan)).toEqual([60_000]);
  expect(pollTimes(60_400, plan)).toEqual([60_000, 60_500]);
  expect(pollTimes(63_000, plan).length).toBeLessThanOrEqual(7);
  // A job far shorter than expected is only seen at the expected end: the price of the few polls.
  expect(pollTimes(5_000, plan)).toEqual([60_000]);
});

test("with a callback expected: a safety poll every minute, the first no earlier than 1.25 times the expected duration", () => {
  for (const elapsedMs of [0, 1000, 45_000, 600_000]) expect(pollDelayMs({ elapsedMs, callback: true })).toBe(CALLBACK_SAFETY_POLL_MS);
  const plan = { expectedDurationMs: 300_000, callback: true };
  expect(pollDelayMs({ ...plan, elapsedMs: 0 })).toBe(375_000);
  expect(pollDelayMs({ ...plan, elapsedMs: 360_000 })).toBe(CALLBACK_SAFETY_POLL_MS);
  expect(pollDelayMs({ ...plan, elapsedMs: 400_000 })).toBe(CALLBACK_SAFETY_POLL_MS);
  // A short expected duration does not make the safety net tighter.
  expect(pollDelayMs({ elapsedMs: 0, expectedDurationMs: 4_000, callback: true })).toBe(CALLBACK_SAFETY_POLL_MS);
  // A 60-s job whose callback is lost: seen done by the first safety poll; a 10-minute one after 10 of them.
  expect(pollTimes(60_000, { callback: true })).toEqual([60_000]);
  expect(pollTimes(600_000, { callback: true })).toHaveLength(10);
});

test("a clock that went backwards or a nonsense age still gives a wait within bounds", () => {
  for (const elapsedMs of [-5000, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, Number.NaN]) {
    for (const plan of [{ callback: false }, { callback: false, expectedDurationMs: 10_000 }, { callback: true }]) {
      const wait = pollDelayMs({ ...plan, elapsedMs });
      expect(wait).toBeGreaterThanOrEqual(25);
      expect(wait).toBeLessThanOrEqual(CALLBACK_SAFETY_POLL_MS);
    }
  }
});
