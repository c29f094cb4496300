// The status column of `tasks` (docs/api.md#task-object). PostgreSQL checks the same list, so a
// value written outside this module fails at the database, not in a client's parser.
export const TASK_STATUSES = ["queued", "in_progress", "completed", "failed"] as const;

export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TaskStatus = {
  Queued: "queued",
  InProgress: "in_progress",
  Completed: "completed",
  Failed: "failed",
} as const satisfies Record<string, TaskStatus>;

/** Statuses a task is still moving in; the task reconciler and cancel look only at these. */
export const OPEN_TASK_STATUSES: readonly TaskStatus[] = [TaskStatus.Queued, TaskStatus.InProgress];

/** A terminal task never changes again: its row, its webhook body and its poll answer are final. */
export function isTerminalTask(status: string): status is "completed" | "failed" {
  return status === TaskStatus.Completed || status === TaskStatus.Failed;
}
