/**
 * Chart categories, in stacking and legend order, with one colour each. Every `http_<status>` is
 * one category (`http_error`): per-status bars would drown the chart; the attempt table and the
 * `webhook_attempts_total` metric keep the status.
 */
export const OUTCOME_CATEGORIES = [
  { name: "delivered", colour: "#2e7d32" },
  { name: "http_error", colour: "#ef6c00" },
  { name: "timeout", colour: "#1976d2" },
  { name: "connect_failed", colour: "#c62828" },
  { name: "dns_failed", colour: "#ad1457" },
  { name: "tls_error", colour: "#6a1b9a" },
  { name: "blocked_private_address", colour: "#283593" },
  { name: "request_failed", colour: "#5d4037" },
  { name: "render_timeout", colour: "#00838f" },
  { name: "render_failed", colour: "#00695c" },
  { name: "stale_claim", colour: "#757575" },
  { name: "attempt_lost", colour: "#212121" },
  { name: "other", colour: "#bdbdbd" },
] as const;

export type OutcomeCategory = (typeof OUTCOME_CATEGORIES)[number]["name"];

const KNOWN = new Set<string>(OUTCOME_CATEGORIES.map((category) => category.name));

/** The chart category of an attempt's `outcome` column (`delivered` or its `last_error`). */
export function outcomeCategory(outcome: string): OutcomeCategory {
  if (/^http_\d{3}$/.test(outcome)) return "http_error";
  return KNOWN.has(outcome) ? (outcome as OutcomeCategory) : "other";
}
