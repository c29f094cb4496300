import type { Queue } from "bullmq";
import { readRedeliveryTarget, reopenForRedelivery, type Database } from "@gen/db";
import type { DeliveryStatus } from "@gen/domain";
import type { WebhookJobData } from "@gen/queues";
import { ensureAttemptJob } from "./attempt-job.ts";

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
  | { ok: false; reason: "not_finished"; status: DeliveryStatus };

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
  const attempts = await reopenForRedelivery(deps.db, taskId, requestedBy, now);
  if (attempts === undefined) return explainRefusal(deps.db, taskId);
  const attempt = attempts + 1;
  try {
    await ensureAttemptJob(deps.webhookQueue, taskId, attempt);
    return { ok: true, attempt, enqueued: true };
  } catch (error) {
    return { ok: true, attempt, enqueued: false, enqueueError: error };
  }
}

async function explainRefusal(db: Database, taskId: string): Promise<RedeliveryRequest> {
  const target = await readRedeliveryTarget(db, taskId);
  if (!target) return { ok: false, reason: "unknown_task" };
  if (target.status === null) return { ok: false, reason: "no_webhook" };
  return { ok: false, reason: "not_finished", status: target.status };
}
