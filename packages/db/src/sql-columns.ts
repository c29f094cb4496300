// Column lists for plain-SQL reads that must return exactly the shapes Prisma would (camelCase
// keys; pg already gives Date for timestamptz, objects for jsonb and numbers for integer), so the
// renderers cannot tell the two paths apart.
const columns = (table: string, fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([key, column]) => (key === column ? `${table}.${column}` : `${table}.${column} AS "${key}"`))
    .join(", ");

export const WEBHOOK_DELIVERY_COLUMNS = columns("w", {
  taskId: "task_id",
  url: "url",
  status: "status",
  attempts: "attempts",
  responseStatus: "response_status",
  lastError: "last_error",
  lastAttemptAt: "last_attempt_at",
  deliveredAt: "delivered_at",
  updatedAt: "updated_at",
  nextAttemptAt: "next_attempt_at",
  redeliveryRequestedBy: "redelivery_requested_by",
});
