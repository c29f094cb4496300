/** An attempt that was claimed (it has its attempt-log row) and is not recorded yet. */
export interface OpenAttempt {
  taskId: string;
  attempt: number;
  /** An operator's redelivery: no retry follows it, whatever its number. */
  manual: boolean;
  attemptId: string;
  startedAt: Date;
  taskFinishedAt: Date;
}
