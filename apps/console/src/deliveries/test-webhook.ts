import { DeliveryStatus, WireError } from "@gen/domain";
import type { WebhookSender } from "@gen/webhook-sender";
import { validateWebhookUrl } from "@gen/webhook-url";

/**
 * The id of every test webhook: a task id no task has (ids are 128 random bits), so a receiver that
 * verifies calls by reading the task with its key (docs/api.md#receiving-webhooks) gets 404 and
 * ignores it, as it would a forged call.
 */
export const TEST_WEBHOOK_TASK_ID = `task_${"0".repeat(32)}`;

/** How many test webhooks one process sends at once: a console action, not a traffic source. */
const MAX_IN_FLIGHT = 2;

export type TestWebhookResult =
  { kind: "refused"; reason: string } | { kind: "busy" } | { kind: "sent"; outcome: string; status: number | null; durationMs: number };

/** What the page says about each wire outcome (docs/operations/failure-modes.md#webhook-delivery-outcomes). */
const MEANINGS: Record<(typeof WireError)[keyof typeof WireError], string> = {
  [WireError.Timeout]: "no response headers within WEBHOOK_TIMEOUT_MS (name resolution included)",
  [WireError.ConnectFailed]: "refused, unreachable, or the connection broke before a status",
  [WireError.DnsFailed]: "the name did not resolve",
  [WireError.TlsError]: "TLS handshake or certificate check failed",
  [WireError.BlockedPrivateAddress]: "the name resolved to a private, loopback or metadata address outside WEBHOOK_ALLOWED_CIDRS; nothing was sent",
  [WireError.RequestFailed]: "the request failed otherwise (see the log line)",
};

export function outcomeMeaning(outcome: string): string {
  if (outcome === DeliveryStatus.Delivered) return "the receiver answered 2xx";
  if (/^http_\d{3}$/.test(outcome)) return "the receiver answered a status other than 2xx (redirects are not followed)";
  return MEANINGS[outcome as keyof typeof MEANINGS] ?? "";
}

/**
 * A task-shaped body (docs/api.md#task-object: the same fields in the same order) for the test id,
 * completed now, charged nothing.
 */
function testWebhookBody(now: Date): string {
  return JSON.stringify({
    id: TEST_WEBHOOK_TASK_ID,
    model: "webhook-test",
    status: "completed",
    created_at: Math.floor(now.getTime() / 1000),
    output: {},
    usage: { credits: 0 },
    error: null,
  });
}

/**
 * The console's "send a test webhook": one POST of the test body to a URL the operator gives, by
 * the delivery's own sender (the same address block, allow list, trust store and timeout), after
 * the same checks as a submitted `webhook_url`. Not an attempt of any task: nothing is recorded,
 * retried or counted in the delivery metrics.
 */
export function createTestWebhooks(sender: WebhookSender) {
  let inFlight = 0;
  return {
    async send(url: unknown): Promise<TestWebhookResult> {
      const check = validateWebhookUrl(url);
      if (!check.ok) return { kind: "refused", reason: check.reason };
      if (inFlight >= MAX_IN_FLIGHT) return { kind: "busy" };
      inFlight++;
      const started = performance.now();
      try {
        const result = await sender.send(check.url, testWebhookBody(new Date()));
        const durationMs = Math.round(performance.now() - started);
        return result.ok
          ? { kind: "sent", outcome: DeliveryStatus.Delivered, status: result.status, durationMs }
          : { kind: "sent", outcome: result.lastError, status: result.status, durationMs };
      } finally {
        inFlight--;
      }
    },
  };
}
