import { WorkerError } from "@gen/domain";
import {
  FINAL_ATTEMPT_WINDOW_MS,
  attemptWindowEndsAt,
  fitsWindow,
  isScheduledAttempt,
  manualAttemptWindowEndsAt,
  nextAttemptDueAt,
  staleClaim,
} from "@gen/webhook-delivery";

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

test.each([
  // [what, attempt, dueAt (ms after the task finished), window end]
  ["attempt 1: until attempt 3 is due", 1, 0, 300_000],
  ["attempt 2: until attempt 3 is due, whenever it runs", 2, 41_000, 300_000],
  ["attempt 2 late: the same bound", 2, 299_000, 300_000],
  ["attempt 3: 60 s from its due time", 3, 300_000, 360_000],
  ["attempt 3 due late (attempt 2 failed after the final delay): 60 s from then", 3, 312_345, 372_345],
] as const)("window of %s", (_what, attempt, dueMs, endMs) => {
  expect(attemptWindowEndsAt(attempt, at(dueMs), finished, schedule)).toEqual(at(endMs));
});

test("a manual attempt gets the final attempt's window from its request, whatever the schedule", () => {
  const requested = new Date("2026-11-23T08:00:00.000Z");
  expect(manualAttemptWindowEndsAt(requested)).toEqual(new Date(requested.getTime() + FINAL_ATTEMPT_WINDOW_MS));
});

test.each([
  [0, false],
  [1, true],
  [2, true],
  [3, true],
  [4, false],
  [1.5, false],
  [-1, false],
])("attempt %p is a scheduled one: %p", (attempt, scheduled) => {
  expect(isScheduledAttempt(attempt)).toBe(scheduled);
});

test.each([
  ["claimed with the whole timeout left", 290_000, null],
  ["claimed 1 ms too late", 290_001, WorkerError.StaleClaim],
  ["claimed after the window", 400_000, WorkerError.StaleClaim],
] as const)("a claim %s", (_what, claimedMs, lastError) => {
  const result = staleClaim(at(claimedMs), at(300_000), schedule);
  expect(result === null ? null : !result.ok && result.lastError).toBe(lastError);
  if (result) expect(result).toMatchObject({ status: null, detail: expect.stringContaining("window ends") });
});
