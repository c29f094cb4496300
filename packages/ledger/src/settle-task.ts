import { OPEN_TASK_STATUSES, TaskStatus } from "@gen/domain";
import { closeReservation, findTask, type Queryable, type Task, type TaskEnd } from "@gen/db";
import { WORKFLOW_CATALOG } from "@gen/errors";
import { closingEntries } from "./ledger-entries.ts";
import type { TaskOutcome } from "./task-outcome.ts";

/**
 * Moves a task from queued/in_progress to its terminal state and settles its credits: charge and
 * refund ledger rows (reserve = charge + refund), the refund credited to the balance, all in one
 * statement. Exactly once: the status condition makes a second call (a job delivered twice, a
 * cancel racing a completion) a no-op that returns null, and a unique (task_id, kind) on the
 * ledger backs that up.
 */
export async function settleTask(db: Queryable, taskId: string, outcome: TaskOutcome): Promise<Task | null> {
  const end: TaskEnd = {
    kind: "finished",
    status: outcome.status,
    output: outcome.status === TaskStatus.Completed ? outcome.output : null,
    errorCode: outcome.status === TaskStatus.Failed ? outcome.code : null,
    errorMessage: outcome.status === TaskStatus.Failed ? (outcome.message ?? WORKFLOW_CATALOG[outcome.code].message) : null,
    tokens: outcome.tokens ?? null,
  };
  return closeTask(db, taskId, OPEN_TASK_STATUSES, end, outcome.charge);
}

/**
 * The gateway's 60002: a committed submission whose job could not be enqueued is undone through the
 * same close as a settlement, with nothing charged: full refund, task hidden, its idempotency key
 * freed. Only while the task is still queued, atomically against the worker's start (the same row
 * lock): a job that lands later finds the task discarded and ends without running. Returns
 * `{ compensated: true }`, or the task as it is when a worker had already taken it (it runs and
 * settles normally).
 */
export async function compensateSubmission(db: Queryable, taskId: string): Promise<{ compensated: true } | { compensated: false; task: Task | undefined }> {
  if (await closeTask(db, taskId, [TaskStatus.Queued], { kind: "discarded" }, 0)) return { compensated: true };
  return { compensated: false, task: await findTask(db, taskId) };
}

/** The one way a reservation ends: `charge` is clamped to [0, reserved] and the rest refunded. */
async function closeTask(db: Queryable, taskId: string, from: readonly TaskStatus[], end: TaskEnd, charge: number): Promise<Task | null> {
  const task = await findTask(db, taskId);
  if (!task || task.discardedAt || !from.includes(task.status)) return null;
  const charged = Math.max(0, Math.min(Math.floor(charge), task.reservedCredits));
  const refunded = task.reservedCredits - charged;
  const closed = await closeReservation(db, taskId, { from, end, charged, refunded, entries: closingEntries(charged, refunded) });
  return closed ?? null;
}
