import { requestRedelivery, type RedeliveryDeps } from "@gen/webhook-delivery";
import type { Logger } from "@gen/logger";

/** Redeliveries a bulk run requests per second, and at most per run: receivers coming back from an outage are not flooded. */
export const BULK_REDELIVERY_PER_SECOND = 10;
export const BULK_REDELIVERY_MAX = 1000;

/** Where a bulk run stands (the failing-deliveries page shows it). */
export interface BulkRun {
  operator: string;
  total: number;
  requested: number;
  /** Deliveries no longer dead when their turn came (reopened meanwhile), or gone. */
  skipped: number;
  failed: number;
  startedAt: Date;
  finishedAt: Date | null;
}

/**
 * An operator's bulk redelivery, one run at a time per console process: each task goes through
 * `requestRedelivery`, exactly as the task page's button (one manual attempt recorded with the
 * operator's name, no retry after it), spaced to `perSecond`. Running the same filter again is
 * safe: a delivery already reopened is no longer `failed`, and is skipped.
 */
export class BulkRedelivery {
  private current: BulkRun | undefined;

  constructor(
    private readonly deps: RedeliveryDeps & { logger: Logger },
    private readonly perSecond = BULK_REDELIVERY_PER_SECOND,
  ) {}

  /** The running run, or the last one. */
  status(): BulkRun | undefined {
    return this.current && { ...this.current };
  }

  /** Starts a run over `taskIds` unless one is running (false then); returns at once, the run goes on. */
  start(taskIds: readonly string[], operator: string, operatorId: string): { started: true; done: Promise<BulkRun> } | { started: false } {
    if (this.current && this.current.finishedAt === null) return { started: false };
    const run: BulkRun = { operator, total: taskIds.length, requested: 0, skipped: 0, failed: 0, startedAt: new Date(), finishedAt: null };
    this.current = run;
    this.deps.logger.info("bulk webhook redelivery started", { operator_id: operatorId, deliveries: taskIds.length });
    return { started: true, done: this.run(run, taskIds, operatorId) };
  }

  private async run(run: BulkRun, taskIds: readonly string[], operatorId: string): Promise<BulkRun> {
    const spacingMs = 1000 / this.perSecond;
    for (const [index, taskId] of taskIds.entries()) {
      const due = run.startedAt.getTime() + index * spacingMs;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      try {
        const result = await requestRedelivery(this.deps, taskId, run.operator);
        if (!result.ok) {
          run.skipped++;
          continue;
        }
        run.requested++;
        this.deps.logger.info("webhook redelivery requested", {
          task_id: taskId,
          attempt: result.attempt,
          operator_id: operatorId,
          enqueued: result.enqueued,
          bulk: true,
        });
      } catch (error) {
        run.failed++;
        this.deps.logger.warn("bulk webhook redelivery: a request failed", { task_id: taskId, err: error });
      }
    }
    run.finishedAt = new Date();
    this.deps.logger.info("bulk webhook redelivery finished", { operator_id: operatorId, requested: run.requested, skipped: run.skipped, failed: run.failed });
    return { ...run };
  }
}
