import { attemptWindowEndsAt, fitsWindow, nextAttemptDueAt, FINAL_ATTEMPT_WINDOW_MS } from "../../src/delivery/delivery-schedule.ts";

// The defaults of docs/api.md#webhook-delivery-schedule.
const schedule = { webhookRetryDelayMs: 40_000, webhookFinalAttemptMs: 300_000, webhookTimeoutMs: 10_000 };
const finished = new Date("2026-11-22T10:00:00.000Z");
const at = (ms: number) => new Date(finished.getTime() + ms);

test("attempt 2 is due a retry delay after attempt 1 failed", () => {
  expect(nextAttemptDueAt(1, at(1_234), finished, schedule)).toEqual(at(41_234));
});

test("attempt 3 is due a fixed time after the task finished, or at once when attempt 2 failed later", () => {
  expect(nextAttemptDueAt(2, at(50_000), finished, schedule)).toEqual(at(300_000));
  expect(nextAttemptDueAt(2, at(300_000), finished, schedule)).toEqual(at(300_000));
  expect(nextAttemptDueAt(2, at(312_345), finished, schedule)).toEqual(at(312_345));
});

test("nothing follows attempt 3", () => {
  expect(nextAttemptDueAt(3, at(400_000), finished, schedule)).toBeNull();
});

test("attempts 1 and 2 must finish before attempt 3 is due; attempt 3 within 60 s of its due time", () => {
  expect(attemptWindowEndsAt(1, finished, finished, schedule)).toEqual(at(300_000));
  expect(attemptWindowEndsAt(2, at(41_000), finished, schedule)).toEqual(at(300_000));
  expect(attemptWindowEndsAt(3, at(320_000), finished, schedule)).toEqual(at(320_000 + FINAL_ATTEMPT_WINDOW_MS));
});

test("a claim fits its window only if the whole timeout does", () => {
  const end = at(300_000);
  expect(fitsWindow(at(290_000), end, schedule)).toBe(true);
  expect(fitsWindow(at(290_001), end, schedule)).toBe(false);
});
