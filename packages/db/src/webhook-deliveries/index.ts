// Every statement on webhook_deliveries and webhook_attempts. The transitions they make are
// decided in @gen/webhook-delivery; a delivery row is born `pending` with its task (tasks module).
// The three statements of every attempt exist only in their batched form (batched-statement.ts).
export { loadDeliveryStates, type DeliveryState } from "./delivery-state.ts";
export { TASK_FOR_BODY_COLUMNS, claimAttemptRows, type ClaimRequest, type TaskForBody } from "./claim-attempt.ts";
export { finishAttemptRows, type AttemptRecord } from "./finish-attempt.ts";
export { reopenForRedelivery, readRedeliveryTarget } from "./reopen-for-redelivery.ts";
export { listOpenAttempts, listPendingOfFinishedTasks, listWaitingDeliveries } from "./stranded-deliveries.ts";
export { findVisibleTasksWithDelivery, readDelivery, type DeliveryRecord, type FirstDelivery, type TaskWithDelivery } from "./read-delivery.ts";
export { listAttempts, listRecentAttempts, countOutcomesPerMinute, type AttemptLogRow } from "./attempt-log.ts";
export { listFailingDeliveries, listDeadDeliveryTaskIds, type FailingDelivery, type FailingDeliveryFilter } from "./failing-deliveries.ts";
