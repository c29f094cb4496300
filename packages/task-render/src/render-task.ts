import type { RenderableDelivery, RenderableTask } from "./renderable-task.ts";

export interface RenderOptions {
  /** Adds `webhook` (`null` when the task has no webhook_url). Leave undefined to omit the field. */
  webhook?: RenderableDelivery | null;
  billing?: boolean;
  /** Webhook bodies only: the attempt's `whd_` id, carried as `error.request_id` of a failed task. */
  deliveryId?: string;
}

const TERMINAL = new Set(["completed", "failed"]);

/**
 * The task body of `GET /api/v1/tasks/{id}` and of every webhook POST. One function builds both,
 * so the webhook body is byte-for-byte the default GET body (docs/api.md#task-object fixes the field order).
 */
export function renderTask(task: RenderableTask, options: RenderOptions = {}): string {
  return JSON.stringify(taskObject(task, options));
}

export function taskObject(task: RenderableTask, options: RenderOptions = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: task.id,
    model: task.model,
    status: task.status,
    created_at: Math.floor(task.createdAt.getTime() / 1000),
    output: task.status === "completed" ? (task.output ?? null) : null,
    // The final charge; nothing is final before a terminal state.
    usage: { credits: TERMINAL.has(task.status) ? (task.chargedCredits ?? 0) : 0 },
    error: errorObject(task, options.deliveryId),
  };
  if (options.webhook !== undefined) body.webhook = options.webhook === null ? null : webhookObject(options.webhook);
  if (options.billing) body.billing = billingObject(task);
  return body;
}

function errorObject(task: RenderableTask, deliveryId: string | undefined): Record<string, unknown> | null {
  if (task.status !== "failed" || task.errorCode === null) return null;
  const error: Record<string, unknown> = { code: task.errorCode, message: task.errorMessage ?? "" };
  if (deliveryId !== undefined) error.request_id = deliveryId;
  return error;
}

/**
 * Once a webhook is delivered, its public object stays as the delivering attempt left it: an
 * operator's later redelivery (console) is an extra send for the receiver, recorded in the attempt
 * log, and never shows as `in_progress`, a `last_error` or another `response_status` next to
 * `delivered`. Before the first 2xx every attempt, manual or scheduled, shows as it happens.
 */
function webhookObject(delivery: RenderableDelivery): Record<string, unknown> {
  const first = delivery.deliveredBy;
  if (first !== null) {
    return {
      status: "delivered",
      attempts: first.attemptNo,
      response_status: first.responseStatus,
      last_error: null,
      last_attempt_at: first.startedAt.toISOString(),
      delivered_at: (first.finishedAt ?? delivery.deliveredAt)?.toISOString() ?? null,
    };
  }
  return {
    status: delivery.status,
    attempts: delivery.attempts,
    response_status: delivery.responseStatus,
    last_error: delivery.lastError,
    last_attempt_at: delivery.lastAttemptAt?.toISOString() ?? null,
    delivered_at: delivery.deliveredAt?.toISOString() ?? null,
  };
}

function billingObject(task: RenderableTask): Record<string, unknown> {
  const hasTokens = task.tokensInput !== null || task.tokensOutput !== null;
  return {
    method: task.billingMethod,
    reserved_credits: task.reservedCredits,
    charged_credits: task.chargedCredits,
    refunded_credits: task.refundedCredits,
    tokens: hasTokens ? { input: task.tokensInput ?? 0, output: task.tokensOutput ?? 0 } : null,
  };
}
