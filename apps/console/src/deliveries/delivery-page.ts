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
  task: {
    id: string;
    status: string;
    discarded: boolean;
    model: string;
    endpoint: string;
    userId: string;
    createdAt: string;
    finishedAt: string | null;
    errorCode: number | null;
    errorMessage: string;
  };
  webhook: { maskedUrl: string; status: string; attempts: number; finished: boolean; object: string } | null;
  attempts: AttemptsTableView;
}

export function deliveryPage(view: DeliveryView, flash: Flash | null, selfHref: string, indexHref: string): DeliveryPageView {
  const { task, delivery } = view;
  return {
    flash,
    selfHref,
    indexHref,
    task: {
      id: task.id,
      status: task.status,
      discarded: task.discardedAt !== null,
      model: task.model,
      endpoint: task.endpoint,
      userId: task.userId,
      createdAt: task.createdAt.toISOString(),
      finishedAt: task.finishedAt?.toISOString() ?? null,
      errorCode: task.errorCode,
      errorMessage: task.errorMessage ?? "",
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
            object: JSON.stringify(taskObject(task, { webhook: delivery }).webhook, null, 2),
          },
    attempts: attemptsTable("attempts", "Every attempt, oldest first", view.attempts),
  };
}
