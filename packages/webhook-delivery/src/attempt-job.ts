import type { Queue } from "bullmq";
import { webhookJobId, type WebhookJobData } from "@gen/queues";
import { enqueueWebhookAttempt } from "./enqueue-webhook-attempt.ts";

// States in which a job will still run (or is running) on its own.
const LIVE = new Set(["waiting", "delayed", "active", "prioritized", "waiting-children"]);

/** Whether attempt `attempt` of a task has a job that will still run, or is running. */
export async function hasLiveAttemptJob(queue: Queue<WebhookJobData>, taskId: string, attempt: number): Promise<boolean> {
  return LIVE.has(await queue.getJobState(webhookJobId(taskId, attempt)));
}

/**
 * Makes sure attempt `attempt` has a job that runs now (or after `delayMs`). A finished job under the same id would
 * swallow the add (BullMQ ignores a known id), so it is removed first. Returns whether a job was
 * added. Two callers racing here (reconcilers, a console redelivery) end with one job: the id is
 * the same.
 */
export async function ensureAttemptJob(queue: Queue<WebhookJobData>, taskId: string, attempt: number, delayMs = 0): Promise<boolean> {
  const id = webhookJobId(taskId, attempt);
  const state = await queue.getJobState(id);
  if (LIVE.has(state)) return false;
  if (state !== "unknown") await queue.remove(id).catch(() => 0);
  await enqueueWebhookAttempt(queue, taskId, attempt, delayMs);
  return true;
}
