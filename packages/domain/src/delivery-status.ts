// The status column of `webhook_deliveries` (docs/api.md#webhook-object), checked by PostgreSQL too.
export const DELIVERY_STATUSES = ["pending", "in_progress", "delivered", "failed"] as const;

export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const DeliveryStatus = {
  Pending: "pending",
  InProgress: "in_progress",
  Delivered: "delivered",
  Failed: "failed",
} as const satisfies Record<string, DeliveryStatus>;

/** A finished delivery runs no further scheduled attempt; only a manual redelivery reopens it. */
export function isFinishedDelivery(status: string): status is "delivered" | "failed" {
  return status === DeliveryStatus.Delivered || status === DeliveryStatus.Failed;
}
