import { DeliveryStatus, isFinishedDelivery, isTerminalTask } from "@gen/domain";
import type { DeliveryState } from "@gen/db";
import { attemptWindowEndsAt, isScheduledAttempt, manualAttemptWindowEndsAt, type Schedule } from "./delivery-schedule.ts";
import type { OpenAttempt } from "./open-attempt.ts";

/** What a job for attempt `attempt` may do, given the delivery as it is now. */
export type AttemptDecision =
  /** Nothing: a stray, duplicate or late job. */
  | { kind: "skip"; reason: SkipReason }
  /** The attempt was claimed and never recorded: its worker died; record it `attempt_lost`, never send again. */
  | { kind: "lost"; open: OpenAttempt }
  /** The attempt the delivery waits for, to `url` for `customer` (the task's user): due at `dueAt`, and it must finish by `windowEndsAt`. */
  | { kind: "run"; url: string; customer: string; manual: boolean; dueAt: Date; windowEndsAt: Date; taskFinishedAt: Date };

export type SkipReason = "no_delivery" | "finished" | "task_not_terminal" | "already_recorded" | "not_awaited";

/**
 * The guard at the top of every delivery job (pure; the state comes from loadDeliveryStates). Only
 * the attempt the delivery waits for may run: attempt 1 while it is `pending`; a later one while it
 * is `in_progress` with that attempt due, which past the schedule's last attempt only an operator's
 * manual redelivery (`redelivery_requested_by` set on the delivery) can be.
 */
export function decideAttempt(state: DeliveryState | undefined, attempt: number, schedule: Schedule): AttemptDecision {
  if (!state) return skip("no_delivery");
  if (isFinishedDelivery(state.status)) return skip("finished");
  if (!isTerminalTask(state.taskStatus) || state.taskFinishedAt === null) return skip("task_not_terminal");
  const taskFinishedAt = state.taskFinishedAt;

  if (state.attemptId !== null && state.attemptStartedAt !== null) {
    if (state.attemptFinishedAt !== null) return skip("already_recorded");
    return {
      kind: "lost",
      open: {
        taskId: state.taskId,
        attempt,
        manual: state.attemptRequestedBy !== null,
        attemptId: state.attemptId,
        startedAt: state.attemptStartedAt,
        taskFinishedAt,
      },
    };
  }

  const manual = state.redeliveryRequestedBy !== null;
  if (state.attempts !== attempt - 1 || (!isScheduledAttempt(attempt) && !manual)) return skip("not_awaited");
  if (attempt === 1) {
    if (state.status !== DeliveryStatus.Pending) return skip("not_awaited");
    return {
      kind: "run",
      url: state.url,
      customer: state.taskUserId,
      manual,
      dueAt: taskFinishedAt,
      windowEndsAt: windowEnd(1, manual, taskFinishedAt, taskFinishedAt, schedule),
      taskFinishedAt,
    };
  }
  if (state.status !== DeliveryStatus.InProgress || state.nextAttemptAt === null) return skip("not_awaited");
  const dueAt = state.nextAttemptAt;
  return {
    kind: "run",
    url: state.url,
    customer: state.taskUserId,
    manual,
    dueAt,
    windowEndsAt: windowEnd(attempt, manual, dueAt, taskFinishedAt, schedule),
    taskFinishedAt,
  };
}

const skip = (reason: SkipReason): AttemptDecision => ({ kind: "skip", reason });

function windowEnd(attempt: number, manual: boolean, dueAt: Date, taskFinishedAt: Date, schedule: Schedule): Date {
  if (manual || !isScheduledAttempt(attempt)) return manualAttemptWindowEndsAt(dueAt);
  return attemptWindowEndsAt(attempt, dueAt, taskFinishedAt, schedule);
}
