import { DELIVERY_STATUSES, FIXED_LAST_ERRORS, HTTP_STATUS_ERROR_PATTERN, SCHEDULED_ATTEMPTS, TASK_STATUSES, TaskStatus } from "@gen/domain";
import { WORKFLOW_CATALOG } from "@gen/errors";
import { workflowCodeDescription } from "./document-description.ts";
import { type Json, nullable, ref } from "./json.ts";

const TIMESTAMP: Json = { type: "string", format: "date-time", description: "ISO 8601, milliseconds, UTC." };

/**
 * Task, its error, webhook and billing blocks, and the webhook body. `outputs` names the
 * per-endpoint output schemas a task of any endpoint may carry.
 */
export function taskSchemas(outputNames: readonly string[]): Record<string, Json> {
  const workflowCodes = Object.entries(WORKFLOW_CATALOG).map(([code, entry]) => ({
    const: Number(code),
    title: code,
    description: `${entry.message} (refund: ${entry.refund === "full" ? "full" : "the model's policy"})`,
  }));
  return {
    Task: {
      type: "object",
      description:
        "A task, as `GET /api/v1/tasks/{id}` returns it and as the webhook sends it. The JSON field order is fixed: " +
        "`id, model, status, created_at, output, usage, error`, then `webhook` (only with `include=webhook`), then `billing` (only with `include=billing`).",
      additionalProperties: false,
      required: ["id", "model", "status", "created_at", "output", "usage", "error"],
      properties: {
        id: { type: "string", pattern: "^task_[0-9a-f]{32}$", description: "Task id; the same as returned by the submission." },
        model: { type: "string", description: "Model identifier given at submission." },
        status: { type: "string", enum: [...TASK_STATUSES], description: "`queued` → `in_progress` → `completed` | `failed`; the last two are terminal." },
        created_at: { type: "integer", description: "Creation time, Unix seconds." },
        output: { description: "The result when `completed` (shape per endpoint); `null` otherwise.", anyOf: [...outputNames.map(ref), { type: "null" }] },
        usage: ref("Usage"),
        error: { description: "`null` unless `failed`.", ...nullable(ref("TaskError")) },
        webhook: { description: "Only with `include=webhook`; `null` when the task was submitted without `webhook_url`.", ...nullable(ref("Webhook")) },
        billing: ref("Billing"),
      },
    },
    Usage: {
      type: "object",
      additionalProperties: false,
      required: ["credits"],
      properties: {
        credits: { type: "integer", minimum: 0, description: "The final charge; 0 before a terminal state and when the reservation was fully refunded." },
      },
    },
    WorkflowCode: { type: "integer", description: workflowCodeDescription(), oneOf: workflowCodes },
    TaskError: {
      type: "object",
      description: "The error of a failed task. Polling returns `code` and `message`; a webhook body also has `request_id`, the attempt's delivery id.",
      additionalProperties: false,
      required: ["code", "message"],
      properties: {
        code: ref("WorkflowCode"),
        message: { type: "string" },
        request_id: { type: "string", pattern: "^whd_[0-9a-f]{24}$", description: "Webhook bodies only: the delivery attempt id." },
      },
    },
    Webhook: {
      type: "object",
      description: "Delivery state of the task's webhook. From submission: `pending`, `attempts` 0 and every other field null.",
      additionalProperties: false,
      required: ["status", "attempts", "response_status", "last_error", "last_attempt_at", "delivered_at"],
      properties: {
        status: {
          type: "string",
          enum: [...DELIVERY_STATUSES],
          description: "`pending` until the task finishes; `in_progress` from attempt 1 (including the waits between attempts); then `delivered` or `failed`.",
        },
        attempts: {
          type: "integer",
          minimum: 0,
          // No maximum: the schedule stops at SCHEDULED_ATTEMPTS, but an operator's manual
          // redelivery adds attempts after it (docs/api.md#manual-redelivery).
          description: `Attempts made so far: at most ${SCHEDULED_ATTEMPTS} scheduled ones, plus any manual redelivery an operator sent.`,
        },
        response_status: { type: ["integer", "null"], description: "HTTP status of the last attempt's answer." },
        last_error: {
          description: "Why the last attempt failed: `http_<status>` for a non-2xx answer, or one of the listed values.",
          anyOf: [{ type: "string", pattern: HTTP_STATUS_ERROR_PATTERN }, { type: "string", enum: [...FIXED_LAST_ERRORS] }, { type: "null" }],
        },
        last_attempt_at: { description: "`null` until the first attempt.", ...nullable(TIMESTAMP) },
        delivered_at: { description: "`null` until delivered.", ...nullable(TIMESTAMP) },
      },
    },
    Billing: {
      type: "object",
      description: "Only with `include=billing`; never in a webhook body. For a terminal task reserved = charged + refunded.",
      additionalProperties: false,
      required: ["method", "reserved_credits", "charged_credits", "refunded_credits", "tokens"],
      properties: {
        method: { type: "string", enum: ["flat", "tokens"], description: "`tokens`: exact token billing; the reservation is the most it can cost." },
        reserved_credits: { type: "integer", minimum: 0 },
        charged_credits: { type: ["integer", "null"], minimum: 0, description: "`null` until the task is terminal." },
        refunded_credits: { type: ["integer", "null"], minimum: 0, description: "`null` until the task is terminal." },
        tokens: {
          description: "Token counts of exact token billing; `null` when not known.",
          ...nullable({
            type: "object",
            additionalProperties: false,
            required: ["input", "output"],
            properties: { input: { type: "integer", minimum: 0 }, output: { type: "integer", minimum: 0 } },
          }),
        },
      },
    },
    WebhookPayload: {
      description:
        "Body of the webhook POST: exactly the default `GET /api/v1/tasks/{id}` body (no `webhook`, no `billing`), with `status` `completed` or `failed`. " +
        "Every attempt for one task sends the same body except `error.request_id`.",
      allOf: [ref("Task")],
      properties: {
        status: { type: "string", enum: [TaskStatus.Completed, TaskStatus.Failed] },
        error: nullable({ allOf: [ref("TaskError")], required: ["request_id"] }),
        webhook: false,
        billing: false,
      },
    },
  };
}
