export { TASK_STATUSES, TaskStatus, OPEN_TASK_STATUSES, isTerminalTask } from "./task-status.ts";
export { DELIVERY_STATUSES, DeliveryStatus, isFinishedDelivery } from "./delivery-status.ts";
export {
  WireError,
  WorkerError,
  httpStatusError,
  LAST_ERROR_NAMES,
  type LastError,
  type WireLastError,
  type WorkerLastError,
  type HttpStatusError,
} from "./last-error.ts";
export { ENDPOINTS, MEDIA_ENDPOINTS, isEndpoint, type Endpoint } from "./endpoint.ts";
export { SCHEDULED_ATTEMPTS, type AttemptNo } from "./webhook-schedule.ts";
export { LEDGER_KINDS, LedgerKind } from "./ledger-kind.ts";
