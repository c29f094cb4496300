export { QUEUE_NAMES, type QueueName } from "./queue-names.ts";
export { generationJobId, webhookJobId, type GenerationJobData, type WebhookJobData } from "./job-types.ts";
export { GENERATION_JOB_OPTIONS, WEBHOOK_JOB_OPTIONS } from "./job-options.ts";
export { checkRedis } from "./check-redis.ts";
export { enqueueWebhookAttempt } from "./enqueue-webhook-attempt.ts";
export { ensureAttemptJob, hasLiveAttemptJob } from "./attempt-job.ts";
export { createQueue } from "./create-queue.ts";
export { createRedis, type RedisClient, type RedisRole } from "./create-redis.ts";
export { createHostSlots, SLOW_HOST_TIMEOUTS, type HostSlot, type HostSlotOptions, type HostSlots } from "./host-slots.ts";
