import type { Config } from "@gen/config";
import { createWebhookSender, type WebhookSender } from "@gen/webhook-sender";
import { fakeResolver } from "../../packages/webhook-sender/test/helpers/fake-resolver.ts";

/**
 * A webhook sender in the bench process for the bench's receiver: the app processes map the
 * receiver's names to loopback (FAULT_HOSTS) and trust its CA; so does this sender.
 */
export function receiverSender(config: Config, faultHosts: string, ca: string): WebhookSender {
  const names = new Map(faultHosts.split(",").map((entry) => entry.split("=") as [string, string]));
  return createWebhookSender({
    timeoutMs: config.webhookTimeoutMs,
    allowedCidrs: config.webhookAllowedCidrs,
    lookup: fakeResolver((hostname) => {
      const address = names.get(hostname);
      return address === undefined ? { code: "ENOTFOUND" } : [address];
    }),
    ca,
  });
}
