import type { Metrics } from "./create-metrics.ts";

/**
 * Counts one recorded delivery attempt. `outcome` is "delivered" or the attempt's `last_error`
 * (the value of the attempt log's `outcome` column). `dispatchSeconds`, given when the receiver
 * answered (any HTTP status), is the time from the task's `finished_at` to that answer.
 * A process without metrics passes undefined and nothing happens.
 */
export function recordWebhookAttempt(metrics: Metrics | undefined, outcome: string, dispatchSeconds?: number): void {
  if (!metrics) return;
  metrics.webhookAttempts.inc({ outcome });
  if (dispatchSeconds !== undefined && Number.isFinite(dispatchSeconds)) metrics.webhookDispatch.observe(Math.max(0, dispatchSeconds));
}
