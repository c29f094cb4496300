export { TASK_STATUSES, TaskStatus, OPEN_TASK_STATUSES, isTerminalTask } from "./task-status.ts";
export { DELIVERY_STATUSES, DeliveryStatus, isFinishedDelivery } from "./delivery-status.ts";
export {
  WireError,
  WorkerError,
  httpStatusError,
  FIXED_LAST_ERRORS,
  HTTP_STATUS_ERROR_PATTERN,
  LAST_ERROR_NAMES,
  type LastError,
  type WireLastError,
  type WorkerLastError,
  type HttpStatusError,
} from "./last-error.ts";
export { ENDPOINTS, MEDIA_ENDPOINTS, isEndpoint, type Endpoint } from "./endpoint.ts";
export { RENDER_TIMEOUT_MS, SCHEDULED_ATTEMPTS, type AttemptNo } from "./webhook-schedule.ts";
export { LEDGER_KINDS, LedgerKind } from "./ledger-kind.ts";
export { type AttemptOutcome } from "./attempt-outcome.ts";
export { PROVIDER_KINDS, type ProviderKind } from "./provider-kind.ts";
export { TASK_LIST_LIMIT } from "./task-list-limit.ts";
