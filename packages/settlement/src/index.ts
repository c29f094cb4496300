export { settleTask } from "./settle-task.ts";
export type { TaskOutcome } from "./task-outcome.ts";
