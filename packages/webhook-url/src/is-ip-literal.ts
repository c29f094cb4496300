import { isIP, isIPv4 } from "node:net";

/**
 * True when `host` (the host part of a URL authority, or a bare address) would be taken as an IP
 * address rather than a name. WHATWG URL parsing turns decimal, hex, octal, short, percent-encoded
 * and full-width notations into dotted IPv4, so the parsed hostname is what gets checked.
 */
export function isIpLiteral(host: string): boolean {
  // In a URL authority brackets only ever enclose an IPv6 address.
  if (host.startsWith("[")) return true;
  if (isIP(host) !== 0) return true;
  if (/[/?#@\\:]/.test(host)) return false;
  try {
    return isIPv4(new URL(`https://${host}/`).hostname);
  } catch {
    return false;
  }
}
