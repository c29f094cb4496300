export { createDeliveryWorker, type DeliveryWorker, type DeliveryWorkerOptions } from "./create-delivery-worker.ts";
export { reconcileDeliveries } from "./reconcile-deliveries.ts";
export type { RenderBody } from "./render-body.ts";
export type { HandOffFirstAttempt } from "./hand-off-first-attempt.ts";
