import { isIPv4, isIPv6 } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * The key an address-keyed limit counts a client under. One IPv6 subscriber is routinely given a
 * whole /64 (SLAAC, privacy addresses), so per-address buckets keyed on the full IPv6 address would
 * hand one client 2^64 of them: IPv6 counts by its /64 prefix. IPv4 counts as is, and an
 * IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, a dual-stack socket's view of an IPv4 client) as
 * its IPv4 address. Anything else (no address: a closed socket) is one key of its own.
 */
export function clientLimitKey(address: string | undefined): string {
  if (address === undefined || address === "") return "unknown";
  if (isIPv4(address)) return address;
  // node:net checks the syntax (ipaddr.js alone is lenient); a zone index picks an interface, not an address.
  const bare = address.split("%", 1)[0]!;
  if (!isIPv6(bare)) return "unknown";
  const parsed = ipaddr.process(bare);
  if (parsed.kind() === "ipv4") return parsed.toString();
  return `${(parsed as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(":")}::/64`;
}
