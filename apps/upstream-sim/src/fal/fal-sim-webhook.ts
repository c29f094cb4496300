import { FalWebhookStatus } from "@gen/providers";
import type { FalSimAnswer } from "./fal-sim-result.ts";

const WEBHOOK_TIMEOUT_MS = 15_000;

/**
 * POSTs fal's webhook body for a finished request: `status` OK with the result as `payload`, or
 * ERROR with the error text and the error answer as `payload`. Delivery failures are dropped.
 */
export async function sendFalWebhook(url: string, requestId: string, answer: FalSimAnswer): Promise<void> {
  const ok = answer.status >= 200 && answer.status < 300;
  const body = ok
    ? { request_id: requestId, gateway_request_id: requestId, status: FalWebhookStatus.Ok, payload: answer.body, error: null }
    : {
        request_id: requestId,
        gateway_request_id: requestId,
        status: FalWebhookStatus.Error,
        payload: answer.body,
        error: `Invalid status code: ${answer.status}`,
      };
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      redirect: "manual",
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    });
    await response.body?.cancel();
  } catch {
    // A lost callback: the receiver still has its polls.
  }
}
