// Every queue the fleet uses. Keys live under QUEUE_PREFIX so deployments and test runs can share one Redis.
export const QUEUE_NAMES = {
  generation: "generation",
  webhook: "webhook-delivery",
  // The fleet's periodic work (reconcilers, purges), one run per interval for the whole fleet.
  maintenance: "maintenance",
} as const;

export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];
