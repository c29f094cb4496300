export { QUEUE_NAMES, type QueueName } from "./queue-names.ts";
export {
  MAINTENANCE_JOBS,
  generationJobId,
  parseWebhookJobId,
  webhookJobId,
  type GenerationJobData,
  type MaintenanceJobData,
  type MaintenanceJobName,
  type WebhookJobData,
} from "./job-types.ts";
export { GENERATION_JOB_OPTIONS, MAINTENANCE_JOB_OPTIONS, WEBHOOK_JOB_OPTIONS } from "./job-options.ts";
export { scheduleMaintenance } from "./schedule-maintenance.ts";
export { checkRedis } from "./check-redis.ts";
export { enqueueGenerationJobs } from "./enqueue-generation-jobs.ts";
export { createQueue } from "./create-queue.ts";
export { createRedis, type RedisClient, type RedisRole } from "./create-redis.ts";
export { createDeliveryCaps, type CapAnswer, type CapScope, type DeliveryCapOptions, type DeliveryCaps } from "./delivery-caps.ts";
export { withDeadline } from "./with-deadline.ts";
export { wakeGenerationJob } from "./wake-generation-job.ts";
export { clearUpstreamCallback, signalUpstreamCallback, takeUpstreamCallback } from "./upstream-callback-signal.ts";
export { createUpstreamSlots, type SlotClaim, type SlotRoute, type UpstreamSlots } from "./upstream-slots.ts";
