import { DeliveryStatus, WireError, WorkerError } from "@gen/domain";
import { afterAttempt, attemptRecord, workerFailure, type AttemptResult, type OpenAttempt } from "@gen/webhook-delivery";

// What a result means for the delivery, and what is written for it (no PostgreSQL, no Redis).
const schedule = { webhookRetryDelayMs: 40_000, webhookFinalAttemptMs: 300_000, webhookTimeoutMs: 10_000 };
const finished = new Date("2026-11-22T10:00:00.000Z");
const at = (ms: number) => new Date(finished.getTime() + ms);

const ok: AttemptResult = { ok: true, status: 204 };
const http503: AttemptResult = { ok: false, lastError: "http_503", status: 503 };
const timeout: AttemptResult = { ok: false, lastError: WireError.Timeout, status: null };
const lost = workerFailure(WorkerError.AttemptLost);
const open = (attempt: number, manual = false): OpenAttempt => ({
  taskId: "task_1",
  attempt,
  manual,
  attemptId: "whd_1",
  startedAt: at(1_000),
  taskFinishedAt: finished,
});

test.each([
  // [what, attempt, manual, result, finished at (ms), next]
  ["a 2xx of attempt 1", 1, false, ok, 1_200, { kind: DeliveryStatus.Delivered }],
  ["a 2xx of attempt 3", 3, false, ok, 300_500, { kind: DeliveryStatus.Delivered }],
  ["a 2xx of a manual attempt", 4, true, ok, 900_000, { kind: DeliveryStatus.Delivered }],
  ["a failed attempt 1: attempt 2 a retry delay later", 1, false, http503, 1_234, { kind: "retry", attempt: 2, dueAt: at(41_234) }],
  ["a lost attempt 1 goes on with the schedule too", 1, false, lost, 20_000, { kind: "retry", attempt: 2, dueAt: at(60_000) }],
  ["a failed attempt 2: attempt 3 at the final delay", 2, false, timeout, 51_000, { kind: "retry", attempt: 3, dueAt: at(300_000) }],
  ["a failed attempt 2 after the final delay: attempt 3 at once", 2, false, timeout, 312_345, { kind: "retry", attempt: 3, dueAt: at(312_345) }],
  ["a failed attempt 3, the last scheduled one", 3, false, http503, 300_200, { kind: DeliveryStatus.Failed }],
  ["a failed manual attempt 2: no retry", 2, true, http503, 900_000, { kind: DeliveryStatus.Failed }],
  ["a failed manual attempt 4", 4, true, timeout, 900_000, { kind: DeliveryStatus.Failed }],
  ["a failed attempt past the schedule, however it came", 5, false, timeout, 900_000, { kind: DeliveryStatus.Failed }],
] as const)("%s", (_what, attempt, manual, result, finishedMs, next) => {
  expect(afterAttempt(open(attempt, manual), result, at(finishedMs), schedule)).toEqual(next);
});

test.each([
  [
    "delivered",
    ok,
    { kind: DeliveryStatus.Delivered },
    { outcome: DeliveryStatus.Delivered, status: DeliveryStatus.Delivered, lastError: null, responseStatus: 204, nextAttemptAt: null },
  ],
  [
    "a retry",
    http503,
    { kind: "retry", attempt: 2, dueAt: at(41_500) },
    { outcome: "http_503", status: DeliveryStatus.InProgress, lastError: "http_503", responseStatus: 503, nextAttemptAt: at(41_500) },
  ],
  [
    "failed",
    timeout,
    { kind: DeliveryStatus.Failed },
    { outcome: WireError.Timeout, status: DeliveryStatus.Failed, lastError: WireError.Timeout, responseStatus: null, nextAttemptAt: null },
  ],
  [
    "lost",
    lost,
    { kind: DeliveryStatus.Failed },
    { outcome: WorkerError.AttemptLost, status: DeliveryStatus.Failed, lastError: WorkerError.AttemptLost, responseStatus: null, nextAttemptAt: null },
  ],
] as const)("the rows written for %s", (_what, result, next, written) => {
  expect(attemptRecord(open(1), result, at(1_500), next)).toEqual({ attempt: 1, attemptId: "whd_1", finishedAt: at(1_500), durationMs: 500, ...written });
});

test("a duration is never negative (clocks of two workers)", () => {
  expect(attemptRecord(open(1), ok, at(900), { kind: DeliveryStatus.Delivered }).durationMs).toBe(0);
});
