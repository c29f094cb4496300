import type { FailureCause } from "@gen/db";
import { isFinishedDelivery } from "@gen/domain";
import { taskObject } from "@gen/task-render";
import { attemptsTable, type AttemptsTableView } from "./attempts-table.ts";
import type { DeliveryView } from "./load-delivery-view.ts";
import { maskWebhookUrl } from "./mask-webhook-url.ts";
import type { Flash } from "./redelivery-flash.ts";

/** What views/deliveries/delivery.eta draws: one task's delivery, its webhook object, every attempt. */
export interface DeliveryPageView {
  flash: Flash | null;
  /** This page's own address (the form posts to it + /redeliver). */
  selfHref: string;
  indexHref: string;
  /** The task search (/console/tasks): the user's other tasks. */
  tasksHref: string;
  task: {
    id: string;
    status: string;
    discarded: boolean;
    model: string;
    endpoint: string;
    userId: string;
    /** The request that created it (`req_...`, what the client quotes). */
    requestId: string;
    createdAt: string;
    finishedAt: string | null;
    errorCode: number | null;
    errorMessage: string;
    /** The upstream that took the job (the model's primary route or a fallback), once submitted. */
    upstream: { provider: string; model: string; id: string } | null;
    /** What the provider said when the task failed: for operators only, never in the API. */
    cause: { step: string; provider: string; model: string; status: string; message: string; requestId: string; code: string } | null;
  };
  webhook: { maskedUrl: string; status: string; attempts: number; finished: boolean; nextAttemptAt: string | null; object: string } | null;
  attempts: AttemptsTableView;
}

export function deliveryPage(view: DeliveryView, flash: Flash | null, hrefs: { self: string; index: string; tasks: string }): DeliveryPageView {
  const { task, delivery } = view;
  return {
    flash,
    selfHref: hrefs.self,
    indexHref: hrefs.index,
    tasksHref: hrefs.tasks,
    task: {
      id: task.id,
      status: task.status,
      discarded: task.discardedAt !== null,
      model: task.model,
      endpoint: task.endpoint,
      userId: task.userId,
      requestId: task.requestId,
      createdAt: task.createdAt.toISOString(),
      finishedAt: task.finishedAt?.toISOString() ?? null,
      errorCode: task.errorCode,
      errorMessage: task.errorMessage ?? "",
      upstream: task.upstreamId === null ? null : { provider: task.upstreamProvider ?? "", model: task.upstreamModel ?? "", id: task.upstreamId },
      cause: causeView(task.failureCause),
    },
    // The object is exactly the API's (GET /api/v1/tasks/{id}?include=webhook), from the same
    // renderer. The summary shows the delivery row itself: after a redelivery of a delivered
    // webhook the two differ.
    webhook:
      delivery === null
        ? null
        : {
            maskedUrl: maskWebhookUrl(delivery.url),
            status: delivery.status,
            attempts: delivery.attempts,
            finished: isFinishedDelivery(delivery.status),
            nextAttemptAt: delivery.nextAttemptAt?.toISOString() ?? null,
            object: JSON.stringify(taskObject(task, { webhook: delivery }).webhook, null, 2),
          },
    attempts: attemptsTable("attempts", "Every attempt, oldest first", view.attempts),
  };
}

/** The stored cause as strings for the page; a row written by hand or by an older worker may hold anything. */
function causeView(stored: unknown): DeliveryPageView["task"]["cause"] {
  if (stored === null || typeof stored !== "object" || Array.isArray(stored)) return null;
  const cause = stored as Record<keyof FailureCause, unknown>;
  const text = (value: unknown) => (typeof value === "string" || typeof value === "number" ? String(value) : "");
  return {
    step: text(cause.step),
    provider: text(cause.provider),
    model: text(cause.upstreamModel),
    status: text(cause.status),
    message: text(cause.message),
    requestId: text(cause.requestId),
    code: text(cause.code),
  };
}
