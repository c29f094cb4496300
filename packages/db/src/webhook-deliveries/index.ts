// Every statement on webhook_deliveries and webhook_attempts. The transitions they make are
// decided in @gen/webhook-delivery; a delivery row is born `pending` with its task (tasks module).
export { loadDeliveryState, type DeliveryState } from "./delivery-state.ts";
export { claimAttemptRow, type TaskForBody } from "./claim-attempt.ts";
export { finishAttemptRow, type AttemptRecord } from "./finish-attempt.ts";
export { reopenForRedelivery, readRedeliveryTarget } from "./reopen-for-redelivery.ts";
export { listOpenAttempts, listPendingOfFinishedTasks, listWaitingDeliveries } from "./stranded-deliveries.ts";
export { readDelivery, type DeliveryRecord, type FirstDelivery } from "./read-delivery.ts";
export { listAttempts, listRecentAttempts, countOutcomesPerMinute, type AttemptLogRow } from "./attempt-log.ts";
export { loadDeliveryStates, claimAttemptRows, finishAttemptRows, type ClaimRequest } from "./gathered-attempt-statements.ts";
