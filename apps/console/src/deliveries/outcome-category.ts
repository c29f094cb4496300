import { DeliveryStatus, FIXED_LAST_ERRORS, HTTP_STATUS_ERROR_PATTERN, type AttemptOutcome, type HttpStatusError } from "@gen/domain";

/**
 * An attempt's `outcome` (`delivered` or its `last_error`, @gen/domain) as a chart category. Every
 * `http_<status>` is one category (`http_error`): per-status bars would drown the chart; the
 * attempt table and the `webhook_attempts_total` metric keep the status.
 */
export type OutcomeCategory = Exclude<AttemptOutcome, HttpStatusError> | "http_error" | "other";

// Keyed by the domain's values: a `last_error` value added there does not type-check here until it has a colour.
const COLOURS: Record<OutcomeCategory, string> = {
  delivered: "#2e7d32",
  http_error: "#ef6c00",
  timeout: "#1976d2",
  connect_failed: "#c62828",
  dns_failed: "#ad1457",
  tls_error: "#6a1b9a",
  blocked_private_address: "#283593",
  request_failed: "#5d4037",
  render_failed: "#00695c",
  render_timeout: "#00838f",
  stale_claim: "#757575",
  attempt_lost: "#212121",
  other: "#bdbdbd",
};

const ORDER: readonly OutcomeCategory[] = [DeliveryStatus.Delivered, "http_error", ...FIXED_LAST_ERRORS, "other"];

/** Chart categories, in stacking and legend order (the domain's), with one colour each. */
export const OUTCOME_CATEGORIES = ORDER.map((name) => ({ name, colour: COLOURS[name] }));

const KNOWN = new Set<string>([DeliveryStatus.Delivered, ...FIXED_LAST_ERRORS]);
const HTTP_STATUS_ERROR = new RegExp(HTTP_STATUS_ERROR_PATTERN);

/** The chart category of an attempt's `outcome` column; `other` for a value this build does not know. */
export function outcomeCategory(outcome: string): OutcomeCategory {
  if (HTTP_STATUS_ERROR.test(outcome)) return "http_error";
  return KNOWN.has(outcome) ? (outcome as OutcomeCategory) : "other";
}
