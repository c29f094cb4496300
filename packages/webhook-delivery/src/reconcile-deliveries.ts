import type { Queue } from "bullmq";
import type { Config } from "@gen/config";
import { RENDER_TIMEOUT_MS } from "@gen/domain";
import { listOpenAttempts, listPendingOfFinishedTasks, listWaitingDeliveries, type Database } from "@gen/db";
import type { Logger } from "@gen/logger";
import type { Metrics } from "@gen/metrics";
import type { WebhookJobData } from "@gen/queues";
import { ensureAttemptJob, hasLiveAttemptJob } from "./attempt-job.ts";
import { recordLostAttempt } from "./record-lost-attempt.ts";

export interface ReconcileDeliveriesDeps {
  config: Config;
  db: Database;
  webhookQueue: Queue<WebhookJobData>;
  logger: Logger;
  now?: () => Date;
  metrics?: Metrics;
}

export interface ReconcileDeliveriesOptions {
  /** How far past due something must be before it counts as stranded [RECONCILE_INTERVAL_MS]. */
  graceMs?: number;
  batch?: number;
}

export interface ReconcileDeliveriesResult {
  /** Attempts enqueued because nothing else would have run them. */
  enqueued: number;
  /** Attempts recorded as `attempt_lost`. */
  lost: number;
}

/**
 * Repairs what a crash or a Redis data loss leaves behind, from PostgreSQL alone:
 * (a) a terminal task whose delivery is still `pending` with no job for attempt 1 (the process died
 *     between the task commit and the hand-off): attempt 1 is enqueued;
 * (b) a delivery waiting for attempt k (scheduled, or an operator's manual redelivery) whose due
 *     time has passed with no job for it: attempt k is enqueued;
 * (c) an attempt claimed longer ago than it could possibly take, with no job left that would
 *     notice: it is recorded as `attempt_lost` and the schedule goes on.
 * Every change is conditional and job ids are per attempt, so every worker may run this at once.
 */
export async function reconcileDeliveries(deps: ReconcileDeliveriesDeps, options: ReconcileDeliveriesOptions = {}): Promise<ReconcileDeliveriesResult> {
  const clock = deps.now ?? (() => new Date());
  const graceMs = options.graceMs ?? deps.config.reconcileIntervalMs;
  const batch = options.batch ?? 500;
  const result = { enqueued: 0, lost: 0 };

  // (c) first: recording a lost attempt schedules the next one, which (b) would otherwise race.
  const longestAttemptMs = RENDER_TIMEOUT_MS + deps.config.webhookTimeoutMs;
  const openCutoff = new Date(clock().getTime() - longestAttemptMs - graceMs);
  await paginate(batch, async (after) => {
    const rows = await listOpenAttempts(deps.db, openCutoff, after, batch);
    for (const row of rows) {
      if (row.taskFinishedAt === null || (await hasLiveAttemptJob(deps.webhookQueue, row.taskId, row.attemptNo))) continue;
      const open = {
        taskId: row.taskId,
        attempt: row.attemptNo,
        manual: row.requestedBy !== null,
        attemptId: row.id,
        startedAt: row.startedAt,
        taskFinishedAt: row.taskFinishedAt,
      };
      if (await recordLostAttempt({ ...deps, now: clock }, open, "reconciler")) result.lost++;
    }
    return rows.map((row) => row.id);
  });

  // (a) terminal tasks whose attempt 1 was never handed off.
  const finishedCutoff = new Date(clock().getTime() - graceMs);
  await paginate(batch, async (after) => {
    const rows = await listPendingOfFinishedTasks(deps.db, finishedCutoff, after, batch);
    for (const { taskId } of rows) if (await ensureAttemptJob(deps.webhookQueue, taskId, 1)) result.enqueued++;
    return rows.map((row) => row.taskId);
  });

  // (b) deliveries waiting for an attempt that is past due and has no job (Redis lost it, or the
  // console's enqueue after its committed request failed).
  const dueCutoff = new Date(clock().getTime() - graceMs);
  await paginate(batch, async (after) => {
    const rows = await listWaitingDeliveries(deps.db, dueCutoff, after, batch);
    for (const { taskId, attempts } of rows) if (await ensureAttemptJob(deps.webhookQueue, taskId, attempts + 1)) result.enqueued++;
    return rows.map((row) => row.taskId);
  });

  if (result.enqueued > 0 || result.lost > 0) deps.logger.warn("delivery reconciler repaired deliveries", { ...result });
  return result;
}

/** Keyset pagination: `page` gets the last key of the previous page and returns its keys in order. */
async function paginate(batch: number, page: (after: string) => Promise<string[]>): Promise<void> {
  let after = "";
  for (;;) {
    const keys = await page(after);
    if (keys.length < batch) return;
    after = keys[keys.length - 1]!;
  }
}
