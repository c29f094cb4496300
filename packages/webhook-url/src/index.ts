export { validateWebhookUrl, WEBHOOK_URL_MAX_LENGTH, type WebhookUrlCheck } from "./validate-webhook-url.ts";
export { webhookRequestTarget } from "./webhook-request-target.ts";
export { isIpLiteral } from "./is-ip-literal.ts";
export { createAddressPolicy, type AddressPolicy } from "./address-policy.ts";
export { createGuardedLookup, type AddressLookup } from "./guarded-lookup.ts";
export { BlockedAddressError, BLOCKED_ADDRESS_CODE } from "./blocked-address-error.ts";
export { ResolutionError, RESOLUTION_FAILED_CODE } from "./resolution-error.ts";
export type { BlockReason, Ipv4BlockReason, Ipv6BlockReason, EmbeddingForm } from "./block-reason.ts";
export { createUrlTargetGuard, type UrlTarget, type UrlTargetGuard, type UrlTargetGuardOptions } from "./url-target-guard.ts";
