// Column lists for plain-SQL reads that must return exactly the shapes Prisma would (camelCase
// keys; pg already gives Date for timestamptz, objects for jsonb and numbers for integer), so the
// renderers cannot tell the two paths apart.
const columns = (table: string, fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([key, column]) => (key === column ? `${table}.${column}` : `${table}.${column} AS "${key}"`))
    .join(", ");

export const TASK_COLUMNS = columns("t", {
  id: "id",
  userId: "user_id",
  endpoint: "endpoint",
  model: "model",
  status: "status",
  input: "input",
  output: "output",
  errorCode: "error_code",
  errorMessage: "error_message",
  webhookUrl: "webhook_url",
  requestId: "request_id",
  billingMethod: "billing_method",
  reservedCredits: "reserved_credits",
  chargedCredits: "charged_credits",
  refundedCredits: "refunded_credits",
  tokensInput: "tokens_input",
  tokensOutput: "tokens_output",
  createdAt: "created_at",
  updatedAt: "updated_at",
  startedAt: "started_at",
  finishedAt: "finished_at",
  upstreamId: "upstream_id",
  discardedAt: "discarded_at",
});
