import type { DeliveryState } from "@gen/db";
import { DeliveryStatus, TaskStatus } from "@gen/domain";
import { decideAttempt, FINAL_ATTEMPT_WINDOW_MS } from "@gen/webhook-delivery";

// Which job may run, decided from the delivery row alone (no PostgreSQL, no Redis).
const schedule = { webhookRetryDelayMs: 40_000, webhookFinalAttemptMs: 300_000, webhookTimeoutMs: 10_000 };
const finished = new Date("2026-11-22T10:00:00.000Z");
const at = (ms: number) => new Date(finished.getTime() + ms);

const state = (overrides: Partial<DeliveryState> = {}): DeliveryState => ({
  taskId: "task_1",
  url: "https://hooks.example.test/x",
  status: DeliveryStatus.Pending,
  attempts: 0,
  nextAttemptAt: null,
  redeliveryRequestedBy: null,
  taskStatus: TaskStatus.Completed,
  taskFinishedAt: finished,
  taskUserId: "usr_1",
  attemptId: null,
  attemptStartedAt: null,
  attemptFinishedAt: null,
  attemptRequestedBy: null,
  ...overrides,
});
const waiting = (attempts: number, dueMs: number, overrides: Partial<DeliveryState> = {}) =>
  state({ status: DeliveryStatus.InProgress, attempts, nextAttemptAt: at(dueMs), ...overrides });
const claimed = (overrides: Partial<DeliveryState> = {}) => ({ attemptId: "whd_1", attemptStartedAt: at(5), ...overrides });

test.each([
  ["no delivery row", undefined, 1, "no_delivery"],
  ["a delivered delivery", state({ status: DeliveryStatus.Delivered, attempts: 1 }), 2, "finished"],
  ["a failed delivery", state({ status: DeliveryStatus.Failed, attempts: 3 }), 4, "finished"],
  ["a task still queued", state({ taskStatus: TaskStatus.Queued, taskFinishedAt: null }), 1, "task_not_terminal"],
  ["a task still running", state({ taskStatus: TaskStatus.InProgress, taskFinishedAt: null }), 1, "task_not_terminal"],
  ["a terminal task without its end time", state({ taskStatus: TaskStatus.Failed, taskFinishedAt: null }), 1, "task_not_terminal"],
  ["an attempt already recorded (a duplicate job)", waiting(1, 41_000, claimed({ attemptFinishedAt: at(10) })), 1, "already_recorded"],
  ["attempt 1 of a delivery already past it", waiting(1, 41_000), 1, "not_awaited"],
  ["attempt 2 while attempt 1 was never claimed", state(), 2, "not_awaited"],
  ["attempt 3 while the delivery waits for attempt 2", waiting(1, 41_000), 3, "not_awaited"],
  ["attempt 2 of an in_progress delivery not waiting (attempt 1 open)", state({ status: DeliveryStatus.InProgress, attempts: 1 }), 2, "not_awaited"],
  ["attempt 2 of a delivery still pending", state({ attempts: 1 }), 2, "not_awaited"],
  ["attempt 4 without a manual request", waiting(3, 400_000), 4, "not_awaited"],
] as const)("skips %s", (_what, given, attempt, reason) => {
  expect(decideAttempt(given, attempt, schedule)).toEqual({ kind: "skip", reason });
});

test.each([
  ["attempt 1 of a pending delivery", state(), 1, false, 0, 300_000],
  ["attempt 1 of a failed task", state({ taskStatus: TaskStatus.Failed }), 1, false, 0, 300_000],
  ["attempt 2 when due", waiting(1, 41_000), 2, false, 41_000, 300_000],
  ["attempt 3 when due", waiting(2, 300_000), 3, false, 300_000, 300_000 + FINAL_ATTEMPT_WINDOW_MS],
  [
    "a manual attempt 2 after a delivered attempt 1",
    waiting(1, 900_000, { redeliveryRequestedBy: "alice" }),
    2,
    true,
    900_000,
    900_000 + FINAL_ATTEMPT_WINDOW_MS,
  ],
  [
    "a manual attempt 4 after the schedule failed",
    waiting(3, 3_600_000, { redeliveryRequestedBy: "alice" }),
    4,
    true,
    3_600_000,
    3_600_000 + FINAL_ATTEMPT_WINDOW_MS,
  ],
] as const)("runs %s", (_what, given, attempt, manual, dueMs, windowEndsMs) => {
  expect(decideAttempt(given, attempt, schedule)).toEqual({
    kind: "run",
    url: given.url,
    customer: "usr_1",
    manual,
    dueAt: at(dueMs),
    windowEndsAt: at(windowEndsMs),
    taskFinishedAt: finished,
  });
});

test.each([
  ["a scheduled attempt", null, false],
  ["a manual attempt", "alice", true],
] as const)("an attempt claimed and never recorded is lost, never sent again: %s", (_what, requestedBy, manual) => {
  const given = state({ status: DeliveryStatus.InProgress, attempts: 2, ...claimed({ attemptRequestedBy: requestedBy }) });
  expect(decideAttempt(given, 2, schedule)).toEqual({
    kind: "lost",
    open: { taskId: "task_1", attempt: 2, manual, attemptId: "whd_1", startedAt: at(5), taskFinishedAt: finished },
  });
});
