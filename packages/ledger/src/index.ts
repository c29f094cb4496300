export { reserveTask, reserveTasks, type TaskToReserve } from "./reserve-task.ts";
export { settleTask, compensateSubmission, type TaskToSettle } from "./settle-task.ts";
export { grantCredits } from "./grant-credits.ts";
export { checkLedger } from "./check-ledger.ts";
export type { TaskOutcome } from "./task-outcome.ts";
export { removeFinishedTasks } from "./remove-finished-tasks.ts";
