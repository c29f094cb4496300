export { createWebhookSender, WEBHOOK_USER_AGENT, type WebhookSender, type WebhookSenderOptions } from "./webhook-sender.ts";
export type { AttemptOutcome } from "./attempt-outcome.ts";
export type { AddressLookup as WebhookLookup } from "@gen/webhook-url";
