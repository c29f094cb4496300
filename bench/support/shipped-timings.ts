import { loadConfig } from "@gen/config";

// The fault stack shortens the timings that decide locks, retries and reconciliation so that its
// scenarios fit a test; the bench measures the product as shipped: their defaults, read from the
// one place they are set.
const shipped = loadConfig({});

/** The shipped lock, reconcile and webhook timings, as the environment of the stack's apps. */
export const SHIPPED_TIMINGS: Record<string, string> = {
  JOB_LOCK_MS: String(shipped.jobLockMs),
  RECONCILE_INTERVAL_MS: String(shipped.reconcileIntervalMs),
  WEBHOOK_TIMEOUT_MS: String(shipped.webhookTimeoutMs),
  WEBHOOK_RETRY_DELAY_MS: String(shipped.webhookRetryDelayMs),
  WEBHOOK_FINAL_ATTEMPT_MS: String(shipped.webhookFinalAttemptMs),
};
