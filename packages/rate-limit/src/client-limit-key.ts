import { isIPv4, isIPv6 } from "node:net";

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
  const bare = address.split("%", 1)[0]!;
  if (!isIPv6(bare)) return "unknown";
  const groups = ipv6Groups(bare);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".");
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const front = parse(head);
  if (tail === undefined) return front;
  const back = parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}
