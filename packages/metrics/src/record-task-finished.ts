import type { Metrics } from "./create-metrics.ts";
import { NO_CODE } from "./metric-names.ts";

/** The fields of a settled task row that the metrics read (structural: any Task row fits). */
export interface FinishedTask {
  status: string;
  errorCode: number | null;
  endpoint: string;
  model: string;
  /** The route that ran it; null when no provider took it (no submit got that far). */
  upstreamProvider: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/**
 * Counts a task that this process settled and, when it had started, observes its generation
 * duration. Call it only with the row `settleTask` returned, so each task is counted once.
 * A process without metrics passes undefined and nothing happens. `model` is a catalog id (the
 * gateway refuses any other), so the label's values are bounded by the catalog.
 */
export function recordTaskFinished(metrics: Metrics | undefined, task: FinishedTask): void {
  if (!metrics) return;
  const provider = task.upstreamProvider ?? NO_CODE;
  const code = task.errorCode === null ? NO_CODE : String(task.errorCode);
  metrics.tasksFinished.inc({ status: task.status, code, endpoint: task.endpoint, model: task.model, provider });
  if (task.startedAt && task.finishedAt) {
    const seconds = (task.finishedAt.getTime() - task.startedAt.getTime()) / 1000;
    metrics.generationDuration.observe({ endpoint: task.endpoint, model: task.model, provider, status: task.status }, Math.max(0, seconds));
  }
}
