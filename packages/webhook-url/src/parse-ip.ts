import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import type { IPv4, IPv6 } from "ipaddr.js";

/**
 * Strict parse of a canonical IP literal (what dns.lookup returns); null for anything else.
 * ipaddr.js alone is too lenient for a security check: it reads `127.1` and `0x7f000001` as
 * IPv4, and reads the IPv4-compatible `::127.0.0.1` as IPv4-mapped `::ffff:127.0.0.1`. So the
 * syntax is checked by node:net, and IPv6 goes through the WHATWG parser first, which writes
 * the embedded dotted quad as hex correctly. A zone index (`%eth0`) is dropped: it picks an
 * interface, not a different address.
 */
export function parseIp(text: string): IPv4 | IPv6 | null {
  const version = isIP(text);
  if (version === 4) return ipaddr.IPv4.parse(text);
  if (version !== 6) return null;
  const withoutZone = text.split("%", 1)[0] ?? "";
  try {
    const bracketed = new URL(`http://[${withoutZone}]/`).hostname;
    return ipaddr.IPv6.parse(bracketed.slice(1, -1));
  } catch {
    return null;
  }
}
