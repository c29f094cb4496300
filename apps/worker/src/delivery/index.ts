export { createDeliveryWorker, type DeliveryWorker, type DeliveryWorkerOptions } from "./create-delivery-worker.ts";
export type { RenderBody } from "./render-body.ts";
// The worker's delivery surface: the reconciler and the hand-off type are @gen/webhook-delivery's.
export { reconcileDeliveries, type HandOffFirstAttempt, type PrepareFirstAttempt } from "@gen/webhook-delivery";
