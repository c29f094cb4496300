import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { createAddressPolicy } from "./address-policy.ts";
import { BlockedAddressError } from "./blocked-address-error.ts";
import { createGuardedLookup, type AddressLookup } from "./guarded-lookup.ts";

/** A URL a request asks the service to hand to someone else, with the field it came in. */
export interface UrlTarget {
  field: string;
  url: string;
}

export interface UrlTargetGuardOptions {
  /** Ranges exempt from the block (INPUT_URL_ALLOWED_CIDRS); cloud metadata never is. Throws on a malformed entry. */
  allowedCidrs: readonly string[];
  /** Resolver with `dns.lookup`'s `{ all: true }` signature; defaults to `dns.lookup` (the system resolver). */
  lookup?: AddressLookup;
  /** How long one name may take to resolve before it is let through unresolved. */
  resolveTimeoutMs?: number;
}

/**
 * Submission-time check of URLs that are passed on to an upstream (a model's `image_url`), so that
 * no request makes an upstream fetch an internal address on the service's behalf
 * (docs/api.md#urls-passed-to-an-upstream). Webhook delivery's address policy, applied to the
 * literal host, or else to every address its name resolves to now.
 */
export interface UrlTargetGuard {
  /** null when every URL may be handed on; otherwise the reason, naming the field, for a 20003. */
  refusal(targets: readonly UrlTarget[]): Promise<string | null>;
}

const DEFAULT_RESOLVE_TIMEOUT_MS = 2000;
/** Names resolved for one submission at most: the gateway's resolver is shared by every request. */
const MAX_RESOLVED_HOSTS = 8;
// RFC 6761: these are loopback wherever they are resolved, whatever this machine's resolver says.
const LOOPBACK_NAME = /(^|\.)localhost\.?$/;

type Resolution = { blocked: BlockedAddressError } | { blocked: null };

export function createUrlTargetGuard(options: UrlTargetGuardOptions): UrlTargetGuard {
  const policy = createAddressPolicy(options.allowedCidrs);
  const lookup = createGuardedLookup(options.lookup ?? dnsLookup, policy);
  const timeoutMs = options.resolveTimeoutMs ?? DEFAULT_RESOLVE_TIMEOUT_MS;

  /** A name that does not resolve (or not in time) is let through: the upstream cannot reach it either, or fails it. */
  function resolve(hostname: string): Promise<Resolution> {
    return new Promise((settle) => {
      const timer = setTimeout(() => settle({ blocked: null }), timeoutMs);
      lookup(hostname, { all: true }, (error: NodeJS.ErrnoException | null, _records: string | LookupAddress[]) => {
        clearTimeout(timer);
        settle({ blocked: error instanceof BlockedAddressError ? error : null });
      });
    });
  }

  return {
    async refusal(targets) {
      const names = new Map<string, string>();
      for (const { field, url } of targets) {
        const parsed = URL.canParse(url) ? new URL(url) : null;
        if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) return `Invalid value for ${field}: must be an http(s) URL`;
        const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
        const literal = isIP(host) !== 0 ? host : LOOPBACK_NAME.test(host) ? "127.0.0.1" : null;
        if (literal !== null) {
          const reason = policy.check(literal);
          if (reason !== null) return refused(field, `${host}: ${reason}`);
        } else if (!names.has(host)) {
          names.set(host, field);
        }
      }
      if (names.size > MAX_RESOLVED_HOSTS) return `Invalid request: URL parameters may name at most ${MAX_RESOLVED_HOSTS} different hosts`;
      const resolved = await Promise.all([...names.keys()].map(resolve));
      const index = resolved.findIndex((resolution) => resolution.blocked !== null);
      if (index === -1) return null;
      const [host, field] = [...names.entries()][index]!;
      const blocked = resolved[index]!.blocked!;
      return refused(field, `${host} resolves to ${blocked.address}: ${blocked.reason}`);
    },
  };
}

function refused(field: string, why: string): string {
  return `Invalid value for ${field}: must not point at a private, loopback, link-local or metadata address (${why})`;
}
