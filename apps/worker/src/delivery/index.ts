export { createDeliveryWorker, type DeliveryWorker, type DeliveryWorkerOptions } from "./create-delivery-worker.ts";
export type { RenderBody } from "./render-body.ts";
// The worker's delivery surface: the reconciler is @gen/webhook-delivery's.
export { reconcileDeliveries } from "@gen/webhook-delivery";
