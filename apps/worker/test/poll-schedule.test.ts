import { pollDelayMs } from "../src/generation/poll-schedule.ts";

test("polls double from 25 ms while a job is young, then follow a tenth of its age up to 2 s", () => {
  expect([0, 10, 25, 60, 400, 999, 5000, 10_000].map(pollDelayMs)).toEqual([25, 25, 25, 60, 400, 999, 1000, 1000]);
  expect([15_000, 20_000, 60_000, 600_000].map(pollDelayMs)).toEqual([1500, 2000, 2000, 2000]);
});

test("a clock that went backwards or a nonsense age still gives a wait within bounds", () => {
  for (const age of [-5000, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]) {
    const wait = pollDelayMs(age);
    expect(wait).toBeGreaterThanOrEqual(25);
    expect(wait).toBeLessThanOrEqual(2000);
  }
});
