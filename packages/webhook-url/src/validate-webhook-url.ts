import { isIPv4 } from "node:net";
import { isSpecialUseDomain } from "./special-use-domains.ts";
import { splitRawUrl } from "./split-raw-url.ts";

export type WebhookUrlCheck = { ok: true; url: string } | { ok: false; reason: string };

export const WEBHOOK_URL_MAX_LENGTH = 2048;

// Whitespace, controls, invisible format characters and lone surrogates: the WHATWG parser
// silently strips or maps several of them, so what we checked would differ from what was typed.
const INVISIBLE = /[\s\p{Cc}\p{Cf}\p{Cs}\p{Z}]/u;
// The path and query are sent on the request line exactly as written, so they must already be
// printable ASCII (anything else has to be percent-encoded by the caller). The fragment is kept
// in the stored URL but, as HTTP requires, never sent; it obeys the same rule for simplicity.
const NOT_PRINTABLE_ASCII = /[^\x21-\x7e]/;
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

const refuse = (reason: string): WebhookUrlCheck => ({ ok: false, reason });

/**
 * Submission-time rules for `webhook_url` (docs/api.md#webhook-url-rules; README lists every
 * rule). Pure: no DNS. On success returns the input unchanged, since delivery posts to it verbatim.
 */
export function validateWebhookUrl(value: unknown): WebhookUrlCheck {
  if (typeof value !== "string") return refuse("webhook_url must be a string");
  if (value.length === 0) return refuse("webhook_url must not be empty");
  if (codePointLength(value) > WEBHOOK_URL_MAX_LENGTH) {
    return refuse(`webhook_url must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`);
  }
  if (INVISIBLE.test(value)) return refuse("webhook_url must not contain whitespace or control characters");
  // WHATWG reads `\` as `/` in https URLs while other parsers do not; refusing it removes the ambiguity.
  if (value.includes("\\")) return refuse("webhook_url must not contain backslashes");

  const url = parseUrl(value);
  if (url && url.protocol !== "https:") return refuse("webhook_url must use https");
  const raw = splitRawUrl(value);
  if (!raw) {
    return refuse(url ? "webhook_url must start with https:// followed by the host name" : "webhook_url is not a valid URL");
  }
  // Checked on the raw authority, before parsing, so that malformed IPv6 (`[fe80::1%25eth0]`)
  // and empty userinfo (`https://@host`, which the parser drops) get the precise reason.
  if (raw.authority.includes("@")) return refuse("webhook_url must not contain credentials");
  if (raw.authority.startsWith("[")) return refuse("webhook_url host must be a domain name, not an IP address");
  if (!url) return refuse("webhook_url is not a valid URL");
  if (url.username !== "" || url.password !== "") return refuse("webhook_url must not contain credentials");
  const colon = raw.authority.lastIndexOf(":");
  // Only the literal `:443` is accepted: `:0443` and a bare `:` are refused rather than normalised.
  if ((colon !== -1 && raw.authority.slice(colon + 1) !== "443") || url.port !== "") {
    return refuse("webhook_url port must be 443 when given");
  }
  if (NOT_PRINTABLE_ASCII.test(raw.tail)) {
    return refuse("webhook_url must be ASCII after the host name (percent-encode other characters)");
  }

  const reason = hostRefusal(url.hostname);
  return reason ? refuse(reason) : { ok: true, url: value };
}

/** `hostname` as WHATWG leaves it: lowercase, IDNA-mapped to ASCII, IPv4 in dotted decimal. */
function hostRefusal(hostname: string): string | null {
  if (hostname.startsWith("[") || isIPv4(hostname)) {
    return "webhook_url host must be a domain name, not an IP address";
  }
  if (hostname.endsWith(".")) return "webhook_url host must not end with a dot";
  const labels = hostname.split(".");
  if (hostname.length > 253 || !labels.every((label) => LABEL.test(label))) {
    return "webhook_url host is not a valid domain name";
  }
  if (labels.length < 2 || isSpecialUseDomain(hostname)) {
    return "webhook_url host must be a public domain name";
  }
  return null;
}

function parseUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

function codePointLength(value: string): number {
  // Only count code points when it can matter: UTF-16 length is an upper bound, and at most twice
  // the count (a 1 MiB value is too long without walking it).
  if (value.length <= WEBHOOK_URL_MAX_LENGTH || value.length > 2 * WEBHOOK_URL_MAX_LENGTH) return value.length;
  let count = 0;
  for (const _ of value) count++;
  return count;
}
