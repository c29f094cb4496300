import type { Queue } from "bullmq";
import type { Logger } from "@gen/logger";
import type { WebhookJobData } from "@gen/queues";
import { attemptWindowEndsAt, type Schedule } from "./delivery-schedule.ts";
import { enqueueWebhookAttempt } from "./enqueue-webhook-attempt.ts";

/**
 * Hands off attempt 1 of a task that just became terminal: the worker's runs it in the same process
 * when its receiver has a ticket free (apps/worker/src/delivery/inline-attempt.ts), else queues it.
 */
export type HandOffFirstAttempt = (taskId: string, url: string, finishedAt: Date) => Promise<void>;

/** Enqueues an attempt routed by its receiver host's tickets (the worker's host gate). */
export type RouteAttempt = (taskId: string, attempt: number, url: string, windowEndsAt: Date) => Promise<void>;

/**
 * The hand-off of attempt 1 through `route`, with attempt 1's window: the worker routes it by its
 * receiver's tickets before it is queued, so one customer's 1,000 finishing tasks to a dead
 * endpoint never sit in the main queue in front of everyone else's.
 */
export function firstAttemptHandOff(route: RouteAttempt, schedule: Schedule): HandOffFirstAttempt {
  return (taskId, url, finishedAt) => route(taskId, 1, url, attemptWindowEndsAt(1, finishedAt, finishedAt, schedule));
}

export interface HandOffDeps {
  webhookQueue: Queue<WebhookJobData>;
  /** The routed hand-off (inline when it can be), where the process has host tickets and a sender; absent: a plain enqueue. */
  handOffWebhook?: HandOffFirstAttempt;
  logger: Logger;
}

/**
 * After a task is terminal (finished by the worker or cancelled in the gateway), its `pending`
 * delivery gets attempt 1. A failure here is logged, not thrown: the task result is already
 * committed, and the delivery reconciler enqueues pending deliveries of terminal tasks that have
 * no job.
 */
export async function handOffWebhook(deps: HandOffDeps, task: { id: string; webhookUrl: string | null; finishedAt: Date | null }): Promise<void> {
  if (task.webhookUrl === null) return;
  try {
    if (deps.handOffWebhook && task.finishedAt) await deps.handOffWebhook(task.id, task.webhookUrl, task.finishedAt);
    else await enqueueWebhookAttempt(deps.webhookQueue, task.id, 1, 0);
  } catch (error) {
    deps.logger.error("webhook hand-off failed; the reconciler will enqueue it", { task_id: task.id, err: error });
  }
}
