import { DELIVERY_STATUSES, TASK_STATUSES, isFinishedDelivery, isTerminalTask } from "@gen/domain";

// The domain's predicates as lists for `IN (...)`, so SQL and code cannot disagree on them.
export const TERMINAL_TASK_STATUSES = TASK_STATUSES.filter(isTerminalTask);
export const FINISHED_DELIVERY_STATUSES = DELIVERY_STATUSES.filter(isFinishedDelivery);
