import type { Database } from "../create-database.ts";

/**
 * The task columns a webhook body is rendered from (@gen/task-render's RenderableTask), read once
 * per attempt: on the hottest path, so the builder on the pool rather than Prisma's client.
 */
export function readTaskForBody(db: Database, taskId: string) {
  return db.$kysely
    .selectFrom("tasks")
    .select([
      "id",
      "model",
      "status",
      "created_at as createdAt",
      "output",
      "error_code as errorCode",
      "error_message as errorMessage",
      "charged_credits as chargedCredits",
      "reserved_credits as reservedCredits",
      "refunded_credits as refundedCredits",
      "billing_method as billingMethod",
      "tokens_input as tokensInput",
      "tokens_output as tokensOutput",
    ])
    .where("id", "=", taskId)
    .executeTakeFirst();
}
