// Jobs carry ids only: handlers reload state from PostgreSQL, because BullMQ delivers at least once.
export interface GenerationJobData {
  taskId: string;
}

export interface WebhookJobData {
  taskId: string;
  /**
   * The attempt's number for the task: 1-3 are the contract's schedule; an operator's manual
   * redelivery is the next number after the last attempt (any value from 2 up). Whether attempt n
   * is a manual one is read from the delivery row, never from the job.
   */
  attempt: number;
}

/** Periodic jobs carry nothing: each reads what it works on from PostgreSQL. */
export type MaintenanceJobData = Record<string, never>;

/** The periodic jobs; each name is also its job scheduler's id. */
export const MAINTENANCE_JOBS = {
  reconcileTasks: "reconcile-tasks",
  reconcileDeliveries: "reconcile-deliveries",
  purgeIdempotencyKeys: "purge-idempotency-keys",
  /** TASK_RETENTION_DAYS; scheduled only when it is set. */
  purgeFinishedTasks: "purge-finished-tasks",
  /** MEDIA_RETENTION_DAYS; scheduled only when it is set. */
  removeExpiredMedia: "remove-expired-media",
} as const;

export type MaintenanceJobName = (typeof MAINTENANCE_JOBS)[keyof typeof MAINTENANCE_JOBS];

/** The job id of a task's generation job is the task id, so a second enqueue is a no-op. */
export const generationJobId = (taskId: string) => taskId;

/** One job per delivery attempt; BullMQ forbids ':' in custom ids. */
export const webhookJobId = (taskId: string, attempt: number) => `${taskId}-a${attempt}`;

/** The task and attempt a webhook job id names (webhookJobId's inverse); null for any other text. */
export function parseWebhookJobId(id: string): WebhookJobData | null {
  const match = /^(.+)-a(\d+)$/.exec(id);
  return match ? { taskId: match[1]!, attempt: Number(match[2]) } : null;
}
