// Jobs carry ids only: handlers reload state from PostgreSQL, because BullMQ delivers at least once.
export interface GenerationJobData {
  taskId: string;
}

export interface WebhookJobData {
  taskId: string;
  attempt: 1 | 2 | 3;
}

/** The job id of a task's generation job is the task id, so a second enqueue is a no-op. */
export const generationJobId = (taskId: string) => taskId;

/** One job per delivery attempt; BullMQ forbids ':' in custom ids. */
export const webhookJobId = (taskId: string, attempt: number) => `${taskId}-a${attempt}`;
