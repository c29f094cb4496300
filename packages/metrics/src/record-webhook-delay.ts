import type { Metrics } from "./create-metrics.ts";

/**
 * Counts one attempt job moved back to delayed: `cap` when the host's or the customer's cap
 * (`scope`) was full, `early` when it ran ahead of its due time. A process without metrics passes
 * undefined and nothing happens.
 */
export function recordWebhookDelay(metrics: Metrics | undefined, reason: "cap" | "early", scope?: "host" | "customer"): void {
  if (!metrics) return;
  metrics.webhookDelayed.inc({ reason });
  if (scope) metrics.webhookCapFull.inc({ scope });
}
