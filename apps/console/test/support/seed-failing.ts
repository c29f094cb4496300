import type { Database, FailureCause } from "@gen/db";
import { newRequestId, newTaskId } from "@gen/ids";

/** A finished task with a webhook delivery as the workers leave it, for the search and failing-delivery pages. */
export interface SeededDelivery {
  userId: string;
  url?: string;
  status: "pending" | "in_progress" | "delivered" | "failed";
  lastError?: string | null;
  lastAttemptAt?: Date;
  nextAttemptAt?: Date | null;
  requestId?: string;
  cause?: FailureCause;
}

export async function seedDelivery(db: Database, seed: SeededDelivery): Promise<{ taskId: string; requestId: string }> {
  const taskId = newTaskId();
  const requestId = seed.requestId ?? newRequestId();
  const lastAttemptAt = seed.lastAttemptAt ?? new Date(Date.now() - 60_000);
  const url = seed.url ?? "https://hooks.example.test/receive?token=secret";
  await db.$kysely
    .insertInto("tasks")
    .values({
      id: taskId,
      user_id: seed.userId,
      endpoint: "images",
      model: "sim-image-1",
      status: "failed",
      input: JSON.stringify({ prompt: "a lighthouse" }),
      error_code: 80001,
      error_message: "Upstream submission failed",
      webhook_url: url,
      request_id: requestId,
      billing_method: "flat",
      reserved_credits: 4,
      charged_credits: 0,
      refunded_credits: 4,
      started_at: new Date(lastAttemptAt.getTime() - 2000),
      finished_at: new Date(lastAttemptAt.getTime() - 1000),
      failure_cause: seed.cause === undefined ? null : JSON.stringify(seed.cause),
    })
    .execute();
  await db.$kysely
    .insertInto("webhook_deliveries")
    .values({
      task_id: taskId,
      url,
      status: seed.status,
      attempts: 1,
      response_status: seed.lastError?.startsWith("http_") ? Number(seed.lastError.slice(5)) : null,
      last_error: (seed.lastError ?? null) as never,
      last_attempt_at: lastAttemptAt,
      next_attempt_at: seed.nextAttemptAt ?? null,
    })
    .execute();
  return { taskId, requestId };
}
