import type { AttemptLogRow } from "@gen/db";

/** What views/deliveries/attempts-table.eta draws. */
export interface AttemptsTableView {
  id: string;
  caption: string;
  rows: Array<{
    attemptNo: number;
    taskId: string;
    id: string;
    startedAt: string | null;
    outcome: string;
    responseStatus: number | null;
    durationMs: number | null;
    requestedBy: string | null;
  }>;
  taskHref?: (taskId: string) => string;
}

/**
 * The attempt log as a table: start time, whd_ delivery id, outcome (`delivered` or the attempt's
 * `last_error`), response status, duration, and who asked for it when it was a manual redelivery
 * (`schedule` otherwise). `taskHref` adds a task column linking to each task's view (the index
 * page's recent list).
 */
export function attemptsTable(id: string, caption: string, attempts: AttemptLogRow[], taskHref?: (taskId: string) => string): AttemptsTableView {
  return {
    id,
    caption,
    taskHref,
    rows: attempts.map((attempt) => ({
      attemptNo: attempt.attemptNo,
      taskId: attempt.taskId,
      id: attempt.id,
      startedAt: attempt.startedAt?.toISOString() ?? null,
      outcome: attempt.outcome ?? (attempt.finishedAt === null ? "running" : ""),
      responseStatus: attempt.responseStatus,
      durationMs: attempt.durationMs,
      requestedBy: attempt.requestedBy,
    })),
  };
}
