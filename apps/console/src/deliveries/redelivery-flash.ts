import { DELIVERY_STATUSES } from "@gen/domain";
import type { RedeliveryRequest } from "@gen/webhook-delivery";

export interface Flash {
  tone: "ok" | "error";
  text: string;
}

const STATUSES = new Set<string>(DELIVERY_STATUSES);

/**
 * The outcome of a redelivery POST travels to the page it redirects to as a query string of fixed
 * codes; the page turns codes into fixed sentences, so nothing a URL carries is echoed as text.
 */
export function flashQuery(result: RedeliveryRequest): string {
  const params = new URLSearchParams();
  if (result.ok) {
    params.set("redelivery", result.enqueued ? "requested" : "deferred");
    params.set("attempt", String(result.attempt));
  } else {
    params.set("redelivery", result.reason);
    if (result.reason === "not_finished") params.set("status", result.status);
  }
  return params.toString();
}

export function flashFromQuery(query: Record<string, unknown>, reconcileIntervalMs: number): Flash | null {
  const attempt = typeof query.attempt === "string" && /^\d{1,6}$/.test(query.attempt) ? query.attempt : "?";
  const status = typeof query.status === "string" && STATUSES.has(query.status) ? query.status : "not finished";
  switch (query.redelivery) {
    case "requested":
      return { tone: "ok", text: `Redelivery requested: attempt ${attempt} is queued and starts within seconds. Reload to see its result.` };
    case "deferred":
      return {
        tone: "ok",
        text: `Redelivery recorded as attempt ${attempt}, but the queue did not answer; the reconciler in the worker starts it within about ${Math.ceil((2 * reconcileIntervalMs) / 1000)} s.`,
      };
    case "not_finished":
      return {
        tone: "error",
        text: `Not redelivered: the delivery is ${status}. Only a delivered or failed webhook can be sent again; wait until its current attempt has finished.`,
      };
    case "no_webhook":
      return { tone: "error", text: "Not redelivered: the task was submitted without a webhook_url." };
    default:
      return null;
  }
}
