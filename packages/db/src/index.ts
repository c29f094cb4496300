export { createDatabase, type Database, type DatabaseOptions, type SqlPool } from "./create-database.ts";
export type { Tables } from "./tables.ts";
export { inTransaction, type Queryable } from "./queryable.ts";
export { checkDatabase, pingDatabase } from "./check-database.ts";
export { isDatabaseUnavailable } from "./database-unavailable.ts";
export {
  findTask,
  findVisibleTask,
  findVisibleTasks,
  insertTask,
  insertTasks,
  markTaskStarted,
  recordUpstreamJob,
  recordFailureCause,
  findStaleOpenTaskIds,
  type Task,
  type NewTask,
  type UserRowLocks,
  type InsertedTasks,
  type UpstreamJobRef,
  type FailureCause,
} from "./tasks.ts";
export { listTasks, type TaskListQuery, type TaskListPosition } from "./list-tasks.ts";
export {
  readCredits,
  ensureUser,
  applyUserEntry,
  closeReservation,
  readTaskLedgers,
  readUserLedgers,
  readOrphanEntries,
  type LedgerEntryValues,
  type TaskEnd,
  type ReservationClose,
  type ClosedTask,
  type TaskLedger,
  type UserLedger,
} from "./users-and-ledger.ts";
export { findKeyByHash, insertApiKey, revokeApiKey, listApiKeys, type KeyOwner, type KeyRef } from "./api-keys.ts";
export { listenForKeyRevocations, type KeyRevocationListener } from "./key-revocations.ts";
export { findOperatorByEmail, findOperatorById, insertOperator, updateOperatorPassword, disableOperator, type Operator } from "./operators.ts";
export { IDEMPOTENCY_WINDOW_MS, purgeExpiredIdempotencyKeys, findIdempotencyKey, deleteIdempotencyKey, type IdempotencyKey } from "./idempotency-keys.ts";
export {
  loadDeliveryStates,
  claimAttemptRows,
  finishAttemptRows,
  type ClaimRequest,
  reopenForRedelivery,
  readRedeliveryTarget,
  listOpenAttempts,
  listPendingOfFinishedTasks,
  listWaitingDeliveries,
  readDelivery,
  findVisibleTasksWithDelivery,
  type TaskWithDelivery,
  listAttempts,
  listRecentAttempts,
  countOutcomesPerMinute,
  listFailingDeliveries,
  listDeadDeliveryTaskIds,
  type FailingDelivery,
  type FailingDeliveryFilter,
  type DeliveryState,
  type AttemptRecord,
  type DeliveryRecord,
  type FirstDelivery,
  type AttemptLogRow,
  TASK_FOR_BODY_COLUMNS,
  type TaskForBody,
} from "./webhook-deliveries/index.ts";
export { findTasksByRequestId, listUserTasks } from "./task-lookups.ts";
export {
  findExpiredTasks,
  nextExpiredFrom,
  readTaskRecords,
  removeTasks,
  findFinishedTasksAfter,
  type ExpiredFrom,
  type ExpiredTask,
  type RemovedTasks,
  type TaskPosition,
} from "./retention.ts";
export { readMark, advanceMark } from "./maintenance-marks.ts";
export { gatherBatches } from "./gather-batches.ts";
export { serialLanes } from "./serial-lanes.ts";
