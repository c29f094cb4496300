export { createDatabase, type Database, type DatabaseOptions, type SqlPool } from "./create-database.ts";
export type { Tables } from "./tables.ts";
export { TASK_COLUMNS } from "./sql-columns.ts";
export { checkDatabase } from "./check-database.ts";
export { isDatabaseUnavailable } from "./database-unavailable.ts";
export { Prisma } from "./generated/client.ts";
export type { Task, User, ApiKey, WebhookDelivery, WebhookAttempt, LedgerEntry } from "./generated/client.ts";
export { IDEMPOTENCY_WINDOW_MS, purgeExpiredIdempotencyKeys } from "./idempotency-keys.ts";
export { loadTask } from "./load-task.ts";
export {
  loadDeliveryState,
  claimAttemptRow,
  finishAttemptRow,
  reopenForRedelivery,
  readRedeliveryTarget,
  listOpenAttempts,
  listPendingOfFinishedTasks,
  listWaitingDeliveries,
  readDelivery,
  listAttempts,
  listRecentAttempts,
  countOutcomesPerMinute,
  readTaskForBody,
  type DeliveryState,
  type AttemptRecord,
  type DeliveryRecord,
  type FirstDelivery,
  type AttemptLogRow,
} from "./webhook-deliveries/index.ts";
