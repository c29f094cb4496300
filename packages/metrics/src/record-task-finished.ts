import type { Metrics } from "./create-metrics.ts";
import { NO_CODE } from "./metric-names.ts";

/** The fields of a settled task row that the metrics read (structural: any Task row fits). */
export interface FinishedTask {
  status: string;
  errorCode: number | null;
  endpoint: string;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/**
 * Counts a task that this process settled and, when it had started, observes its generation
 * duration. Call it only with the row `settleTask` returned, so each task is counted once.
 * A process without metrics passes undefined and nothing happens.
 */
export function recordTaskFinished(metrics: Metrics | undefined, task: FinishedTask): void {
  if (!metrics) return;
  metrics.tasksFinished.inc({ status: task.status, code: task.errorCode === null ? NO_CODE : String(task.errorCode) });
  if (task.startedAt && task.finishedAt) {
    const seconds = (task.finishedAt.getTime() - task.startedAt.getTime()) / 1000;
    metrics.generationDuration.observe({ endpoint: task.endpoint }, Math.max(0, seconds));
  }
}
