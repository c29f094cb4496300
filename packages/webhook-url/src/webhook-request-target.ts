import { splitRawUrl } from "./split-raw-url.ts";
import { validateWebhookUrl } from "./validate-webhook-url.ts";

/**
 * The request-target to put on the request line for a webhook URL: path and query exactly as
 * the caller wrote them (`new URL(...).pathname` would resolve dot segments and re-encode),
 * without the fragment, which HTTP never sends.
 * Throws when `webhookUrl` does not pass validateWebhookUrl.
 */
export function webhookRequestTarget(webhookUrl: string): string {
  const check = validateWebhookUrl(webhookUrl);
  const raw = check.ok ? splitRawUrl(webhookUrl) : null;
  if (!raw) throw new Error(`not a valid webhook URL: ${check.ok ? "unexpected shape" : check.reason}`);
  const target = raw.tail.split("#", 1)[0] ?? "";
  return target.startsWith("/") ? target : `/${target}`;
}
