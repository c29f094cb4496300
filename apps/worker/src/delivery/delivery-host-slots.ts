import type { Config } from "@gen/config";
import { createHostSlots, type HostSlots, type RedisClient } from "@gen/queues";
import { RENDER_TIMEOUT_MS } from "@gen/domain";
import { FINAL_ATTEMPT_WINDOW_MS } from "@gen/webhook-delivery";

/** The fleet-wide tickets per receiver host and per customer, with the settings every process that sends attempts uses. */
export function createDeliveryHostSlots(redis: RedisClient, config: Config): HostSlots {
  return createHostSlots(redis, {
    prefix: config.queuePrefix,
    cap: config.webhookHostConcurrency,
    customerCap: config.webhookCustomerConcurrency,
    // Held from the gate to the end of the POST: the longest attempt, plus a margin.
    leaseMs: RENDER_TIMEOUT_MS + config.webhookTimeoutMs + 5_000,
    slowMemoryMs: Math.max(60_000, 6 * config.webhookTimeoutMs),
    // A parked attempt waits at most until its window closes; the last scheduled attempt's closes last.
    waitMemoryMs: config.webhookFinalAttemptMs + FINAL_ATTEMPT_WINDOW_MS + 60_000,
  });
}
