import type { Job, Queue } from "bullmq";
import { WEBHOOK_JOB_OPTIONS, webhookJobId, type WebhookJobData } from "@gen/queues";

/**
 * Schedules one delivery attempt. The job id names the task and the attempt, so enqueueing the
 * same attempt twice (a retried hand-off, the reconciler) is harmless.
 */
export async function enqueueWebhookAttempt(queue: Queue<WebhookJobData>, taskId: string, attempt: number, delayMs = 0): Promise<Job<WebhookJobData>> {
  return queue.add("deliver", { taskId, attempt }, { ...WEBHOOK_JOB_OPTIONS, jobId: webhookJobId(taskId, attempt), delay: Math.max(0, delayMs) });
}
