import type { Queue } from "bullmq";
import type { Database } from "@gen/db";
import { ensureAttemptJob, type WebhookJobData } from "@gen/queues";

export interface RedeliveryDeps {
  db: Database;
  webhookQueue: Queue<WebhookJobData>;
}

export type RedeliveryRequest =
  /**
   * Committed: attempt `attempt` is waiting. `enqueued` false means Redis did not take the job;
   * the worker's reconciler enqueues it from the delivery row within about two reconcile intervals.
   */
  | { ok: true; attempt: number; enqueued: boolean; enqueueError?: unknown }
  | { ok: false; reason: "unknown_task" | "no_webhook" }
  /** Only a finished delivery (`delivered` or `failed`) can be sent again; `status` is what it is now. */
  | { ok: false; reason: "not_finished"; status: string };

/**
 * An operator's manual redelivery of a task's webhook: one more attempt, numbered after the last,
 * run by the delivery worker exactly like the scheduled ones (new whd_ id, same body, same
 * `last_error` values), with no retry after it. One conditional statement moves a `delivered` or
 * `failed` delivery to `in_progress` with the attempt due now and the operator's name on it, so of
 * two clicks only one gets through; then the attempt's job is enqueued under its usual id
 * (`<task id>-a<n>`), so a repeated enqueue is one job. The delivery row is the truth: the worker
 * reads from it that the attempt is manual, and the reconciler enqueues it if this enqueue is lost.
 */
export async function requestRedelivery(deps: RedeliveryDeps, taskId: string, requestedBy: string, now = new Date()): Promise<RedeliveryRequest> {
  const rows = await deps.db.$queryRaw<Array<{ attempts: number }>>`
    UPDATE webhook_deliveries d
       SET status = 'in_progress', next_attempt_at = ${now}, redelivery_requested_by = ${requestedBy}, updated_at = ${now}
      FROM tasks t
     WHERE d.task_id = ${taskId} AND t.id = d.task_id AND t.discarded_at IS NULL
       AND t.status IN ('completed', 'failed') AND d.status IN ('delivered', 'failed')
    RETURNING d.attempts`;
  const row = rows[0];
  if (!row) return explainRefusal(deps.db, taskId);
  const attempt = row.attempts + 1;
  try {
    await ensureAttemptJob(deps.webhookQueue, taskId, attempt);
    return { ok: true, attempt, enqueued: true };
  } catch (error) {
    return { ok: true, attempt, enqueued: false, enqueueError: error };
  }
}

async function explainRefusal(db: Database, taskId: string): Promise<RedeliveryRequest> {
  const rows = await db.$queryRaw<Array<{ status: string | null }>>`
    SELECT d.status FROM tasks t LEFT JOIN webhook_deliveries d ON d.task_id = t.id
     WHERE t.id = ${taskId} AND t.discarded_at IS NULL`;
  const row = rows[0];
  if (!row) return { ok: false, reason: "unknown_task" };
  if (row.status === null) return { ok: false, reason: "no_webhook" };
  return { ok: false, reason: "not_finished", status: row.status };
}
