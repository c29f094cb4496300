import type { IPv4, IPv6 } from "ipaddr.js";
import { parseIp } from "./parse-ip.ts";

type Range = [IPv4 | IPv6, number];

/**
 * Parses operator-trusted ranges (`WEBHOOK_ALLOWED_CIDRS`), as strictly as the addresses they
 * are compared with (see parseIp): `10.1/16` is an error, not 10.0.0.1/16.
 */
export function parseAllowedRanges(entries: readonly string[]): Range[] {
  return entries.map((entry) => parseRange(entry.trim(), entry));
}

function parseRange(text: string, original: string): Range {
  const [address = "", prefix, extra] = text.split("/");
  const parsed = address.includes("%") ? null : parseIp(address);
  const max = parsed?.kind() === "ipv4" ? 32 : 128;
  const fail = (why: string) => new Error(`invalid allowed CIDR "${original}": ${why} (expected an IPv4 or IPv6 address with optional /prefix)`);
  if (!parsed) throw fail("not an IP address");
  if (extra !== undefined) throw fail("more than one '/'");
  if (prefix === undefined) return [parsed, max];
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) throw fail(`prefix must be 0-${max}`);
  return [parsed, Number(prefix)];
}

/** Also matches an IPv4 address written as IPv4-mapped IPv6, and the other way round. */
export function inAllowedRanges(address: IPv4 | IPv6, ranges: readonly Range[]): boolean {
  const forms: (IPv4 | IPv6)[] = [address];
  if (address.kind() === "ipv4") forms.push((address as IPv4).toIPv4MappedAddress());
  else if ((address as IPv6).isIPv4MappedAddress()) forms.push((address as IPv6).toIPv4Address());
  return forms.some((form) => ranges.some(([base, bits]) => base.kind() === form.kind() && form.match(base, bits)));
}
