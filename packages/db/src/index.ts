export { createDatabase, type Database, type DatabaseOptions } from "./create-database.ts";
export { checkDatabase } from "./check-database.ts";
export { isDatabaseUnavailable } from "./database-unavailable.ts";
export { Prisma } from "./generated/client.ts";
export type { Task, User, ApiKey, WebhookDelivery, WebhookAttempt, LedgerEntry } from "./generated/client.ts";
