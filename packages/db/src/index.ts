export { createDatabase, type Database, type DatabaseOptions, type SqlPool } from "./create-database.ts";
export { TASK_COLUMNS, WEBHOOK_DELIVERY_COLUMNS } from "./sql-columns.ts";
export { checkDatabase } from "./check-database.ts";
export { isDatabaseUnavailable } from "./database-unavailable.ts";
export { Prisma } from "./generated/client.ts";
export type { Task, User, ApiKey, WebhookDelivery, WebhookAttempt, LedgerEntry } from "./generated/client.ts";
export { IDEMPOTENCY_WINDOW_MS, purgeExpiredIdempotencyKeys } from "./idempotency-keys.ts";
export { readDelivery, type FirstDelivery } from "./read-delivery.ts";
export { loadTask } from "./load-task.ts";
