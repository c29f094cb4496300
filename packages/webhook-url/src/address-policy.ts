import type { IPv4, IPv6 } from "ipaddr.js";
import { inAllowedRanges, parseAllowedRanges } from "./allowed-ranges.ts";
import type { BlockReason } from "./block-reason.ts";
import { classifyIpv4, classifyIpv6, isCloudMetadata } from "./classify-address.ts";
import { parseIp } from "./parse-ip.ts";

export interface AddressPolicy {
  /** null when a webhook may connect to `address`; otherwise the range that forbids it. */
  check(address: string): BlockReason | null;
}

/**
 * Send-time SSRF guard (docs/api.md#private-address-block): apply to every address the resolver
 * returns. `allowedCidrs` exempts operator-trusted ranges; throws on a malformed entry.
 */
export function createAddressPolicy(allowedCidrs: readonly string[]): AddressPolicy {
  const allowed = parseAllowedRanges(allowedCidrs);
  return {
    check(address) {
      // Only canonical literals: a socket given `127.1` or a name would resolve it again.
      const parsed = typeof address === "string" ? parseIp(address) : null;
      if (!parsed) return "invalid";
      // Before the allow list: no operator range (not even 0.0.0.0/0) may reach credentials.
      if (isCloudMetadata(parsed)) return metadataReason(parsed);
      if (inAllowedRanges(parsed, allowed)) return null;
      return classify(parsed);
    },
  };
}

function classify(address: IPv4 | IPv6): BlockReason | null {
  return address.kind() === "ipv4" ? classifyIpv4(address as IPv4) : classifyIpv6(address as IPv6);
}

/** Names the embedding where classification does (`ipv4Mapped:cloudMetadata`); else plain `cloudMetadata`. */
function metadataReason(address: IPv4 | IPv6): BlockReason {
  const reason = classify(address);
  return reason?.endsWith("cloudMetadata") ? reason : "cloudMetadata";
}
