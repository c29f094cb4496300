import ipaddr from "ipaddr.js";
import type { IPv4, IPv6 } from "ipaddr.js";
import type { EmbeddingForm, Ipv4BlockReason, Ipv6BlockReason } from "./block-reason.ts";

const cidr = (text: string) => ipaddr.parseCIDR(text);

// Instance and container metadata endpoints (credentials live there): AWS/GCP/Azure/OpenStack
// IMDS, AWS ECS task metadata and EKS pod identity, Alibaba, Oracle, and Azure's wire server (a
// public address reachable only from inside Azure, so it needs blocking on its own). Most sit in
// ranges blocked anyway, but they are checked before any allow list (see address-policy.ts).
const IPV4_METADATA = ["169.254.169.254/32", "169.254.170.2/32", "169.254.170.23/32", "100.100.100.200/32", "168.63.129.16/32", "192.0.0.192/32"].map(cidr);
const IPV6_METADATA = ["fd00:ec2::254/128", "fd00:ec2::23/128", "fd20:ce::254/128"].map(cidr);

const IPV4_BLOCKED_RANGES: Record<string, Ipv4BlockReason> = {
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
  linkLocal: "linkLocal",
  loopback: "loopback",
  carrierGradeNat: "carrierGradeNat",
  private: "private",
  reserved: "reserved",
};
// AS112 and AMT relays are ordinary globally reachable unicast.
const IPV4_PUBLIC_RANGES = new Set(["unicast", "as112", "amt"]);

const IPV6_BLOCKED_RANGES: Record<string, Ipv6BlockReason> = {
  unspecified: "unspecified",
  loopback: "loopback",
  linkLocal: "linkLocal",
  multicast: "multicast",
  uniqueLocal: "uniqueLocal",
  deprecatedSiteLocal: "siteLocal",
  discard: "discard",
  benchmarking: "reserved",
  deprecatedOrchid: "reserved",
  segmentRouting: "reserved",
  reserved: "reserved",
};
const IPV6_PUBLIC_RANGES = new Set(["unicast", "amt", "as112v6", "orchid2", "droneRemoteIdProtocolEntityTags"]);
// Only 2000::/3 is allocated for global unicast; anything else that reaches the end is reserved.
const GLOBAL_UNICAST = cidr("2000::/3");

const MAPPED = cidr("::ffff:0:0/96");
const TRANSLATED = cidr("::ffff:0:0:0/96");
const COMPATIBLE = cidr("::/96");
const NAT64 = cidr("64:ff9b::/96");
const NAT64_LOCAL = cidr("64:ff9b:1::/48");
const SIX_TO_FOUR = cidr("2002::/16");
const TEREDO = cidr("2001::/32");

export function classifyIpv4(address: IPv4): Ipv4BlockReason | null {
  if (IPV4_METADATA.some((range) => address.match(range))) return "cloudMetadata";
  const range = address.range();
  if (IPV4_PUBLIC_RANGES.has(range)) return null;
  // A range name added by a newer ipaddr.js is special-purpose by definition: block it.
  return IPV4_BLOCKED_RANGES[range] ?? "reserved";
}

export function classifyIpv6(address: IPv6): Ipv6BlockReason | null {
  if (IPV6_METADATA.some((range) => address.match(range))) return "cloudMetadata";
  const range = address.range();
  // `::` and `::1` lie inside ::/96 but are not IPv4-compatible addresses.
  if (range === "unspecified" || range === "loopback") return range;

  if (address.match(MAPPED)) return embedded("ipv4Mapped", lastFour(address));
  if (address.match(NAT64)) return embedded("nat64", lastFour(address));
  if (address.match(SIX_TO_FOUR)) return embedded("6to4", ipv4At(address, 2));
  // Deprecated forms with no legitimate destination: blocked even when what they embed is public.
  if (address.match(TRANSLATED)) return embedded("ipv4Translated", lastFour(address)) ?? "ipv4Translated";
  if (address.match(COMPATIBLE)) return embedded("ipv4Compatible", lastFour(address)) ?? "ipv4Compatible";
  // Teredo's client address is obfuscated and the relay path is outside our control.
  if (address.match(TEREDO)) return "teredo";
  // Local-use NAT64 prefixes may be longer than /48, so the IPv4 position is unknown.
  if (address.match(NAT64_LOCAL)) return "nat64Local";

  if (IPV6_PUBLIC_RANGES.has(range)) return address.match(GLOBAL_UNICAST) ? null : "reserved";
  return IPV6_BLOCKED_RANGES[range] ?? "reserved";
}

function embedded(form: EmbeddingForm, inner: IPv4): Ipv6BlockReason | null {
  const reason = classifyIpv4(inner);
  return reason ? `${form}:${reason}` : null;
}

function lastFour(address: IPv6): IPv4 {
  return ipv4At(address, 12);
}

function ipv4At(address: IPv6, byteOffset: number): IPv4 {
  return new ipaddr.IPv4(address.toByteArray().slice(byteOffset, byteOffset + 4));
}

/**
 * True for a metadata endpoint, alone or embedded in any IPv6 form that can carry it (mapped,
 * compatible, translated, NAT64 including local-use /48 with the RFC 6052 /96 layout, 6to4 and
 * both Teredo addresses). No allow list may open these.
 */
export function isCloudMetadata(address: IPv4 | IPv6): boolean {
  if (address.kind() === "ipv4") return IPV4_METADATA.some((range) => address.match(range));
  const v6 = address as IPv6;
  if (IPV6_METADATA.some((range) => v6.match(range))) return true;
  return embeddedIpv4Candidates(v6).some((inner) => IPV4_METADATA.some((range) => inner.match(range)));
}

function embeddedIpv4Candidates(address: IPv6): IPv4[] {
  if (address.match(MAPPED) || address.match(TRANSLATED) || address.match(COMPATIBLE) || address.match(NAT64) || address.match(NAT64_LOCAL)) {
    return [lastFour(address)];
  }
  if (address.match(SIX_TO_FOUR)) return [ipv4At(address, 2)];
  if (address.match(TEREDO)) {
    // RFC 4380: the server in bits 32-63, the client in the last 32 bits with every bit inverted.
    const client = address
      .toByteArray()
      .slice(12, 16)
      .map((byte) => byte ^ 0xff);
    return [ipv4At(address, 4), new ipaddr.IPv4(client)];
  }
  return [];
}
