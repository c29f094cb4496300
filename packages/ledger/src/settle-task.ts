import { OPEN_TASK_STATUSES, TaskStatus } from "@gen/domain";
import { closeReservation, findTask, type ClosedTask, type Queryable, type Task, type TaskEnd } from "@gen/db";
import { WORKFLOW_CATALOG } from "@gen/errors";
import { closingEntries } from "./ledger-entries.ts";
import type { TaskOutcome } from "./task-outcome.ts";

/** The task being settled, as its caller loaded it: `reserved_credits` never changes after the insert. */
export type TaskToSettle = Pick<Task, "id" | "reservedCredits">;

/**
 * Moves a task from queued/in_progress to its terminal state and settles its credits: charge and
 * refund ledger rows (reserve = charge + refund), the refund credited to the balance, all in ONE
 * statement and one round trip (the split is computed from the caller's `reservedCredits`, which
 * the statement also requires of the row). Exactly once: the status condition makes a second call
 * (a job delivered twice, a cancel racing a completion) a no-op that returns null, and a unique
 * (task_id, kind) on the ledger backs that up.
 */
export async function settleTask(db: Queryable, task: TaskToSettle, outcome: TaskOutcome): Promise<ClosedTask | null> {
  const end: TaskEnd = {
    kind: "finished",
    status: outcome.status,
    output: outcome.status === TaskStatus.Completed ? outcome.output : null,
    errorCode: outcome.status === TaskStatus.Failed ? outcome.code : null,
    errorMessage: outcome.status === TaskStatus.Failed ? (outcome.message ?? WORKFLOW_CATALOG[outcome.code].message) : null,
    tokens: outcome.tokens ?? null,
  };
  return closeTask(db, task, OPEN_TASK_STATUSES, end, outcome.charge);
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
  const task = await findTask(db, taskId);
  if (!task || task.discardedAt || task.status !== TaskStatus.Queued) return { compensated: false, task };
  if (await closeTask(db, task, [TaskStatus.Queued], { kind: "discarded" }, 0)) return { compensated: true };
  return { compensated: false, task: await findTask(db, taskId) };
}

/**
 * The one way a reservation ends: `charge` is clamped to [0, reserved] and the rest refunded. The
 * statement's guard (status, not discarded, the same reservation) decides; nothing is read first.
 */
async function closeTask(db: Queryable, task: TaskToSettle, from: readonly TaskStatus[], end: TaskEnd, charge: number): Promise<ClosedTask | null> {
  const reserved = task.reservedCredits;
  const charged = Math.max(0, Math.min(Math.floor(charge), reserved));
  const refunded = reserved - charged;
  const closed = await closeReservation(db, task.id, { from, reserved, end, charged, refunded, entries: closingEntries(charged, refunded) });
  return closed ?? null;
}
