import { isIP } from "node:net";
import { createAddressPolicy } from "./address-policy.ts";
import { createNameResolver, type NameResolver } from "./name-resolver.ts";

/** A URL a request asks the service to hand to someone else, with the field it came in. */
export interface UrlTarget {
  field: string;
  url: string;
}

export interface UrlTargetGuardOptions {
  /** Ranges exempt from the block (INPUT_URL_ALLOWED_CIDRS); cloud metadata never is. Throws on a malformed entry. */
  allowedCidrs: readonly string[];
  /** Defaults to a c-ares resolver (createNameResolver) with the time-out below. */
  resolver?: NameResolver;
  /** How long one name may take to resolve; a name not resolved in time is refused. */
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

// No record of a family is an answer; any other failure (time-out, SERVFAIL, refused) is not.
const NO_RECORD = new Set(["ENODATA", "ENOTFOUND"]);

/** null: every address is allowed, or the name has none. */
type Resolution = { address: string; reason: string } | { unresolved: string } | null;

export function createUrlTargetGuard(options: UrlTargetGuardOptions): UrlTargetGuard {
  const policy = createAddressPolicy(options.allowedCidrs);
  const timeoutMs = options.resolveTimeoutMs ?? DEFAULT_RESOLVE_TIMEOUT_MS;
  const resolver = options.resolver ?? createNameResolver(timeoutMs);

  /**
   * A and AAAA together; the first blocked record refuses. A name without records is let through
   * (nothing to fetch now), but one whose answer is not known in time is refused: letting it
   * through would let a slow name server pass any name.
   */
  function resolve(hostname: string): Promise<Resolution> {
    return new Promise((settle) => {
      const timer = setTimeout(() => settle({ unresolved: `no answer within ${timeoutMs} ms` }), timeoutMs);
      const done = (resolution: Resolution) => {
        clearTimeout(timer);
        settle(resolution);
      };
      let pending = 2;
      let failure: string | null = null;
      const answered = () => {
        if (--pending === 0) done(failure === null ? null : { unresolved: failure });
      };
      for (const query of [() => resolver.resolve4(hostname), () => resolver.resolve6(hostname)]) {
        Promise.resolve()
          .then(query)
          .then(
            (addresses) => {
              for (const address of addresses) {
                const reason = policy.check(address);
                if (reason !== null) return done({ address, reason });
              }
              answered();
            },
            (error: unknown) => {
              const code = (error as NodeJS.ErrnoException | null)?.code;
              if (code === undefined || !NO_RECORD.has(code)) failure ??= code ?? "resolver error";
              answered();
            },
          );
      }
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
      const index = resolved.findIndex((resolution) => resolution !== null);
      if (index === -1) return null;
      const [host, field] = [...names.entries()][index]!;
      const resolution = resolved[index]!;
      if ("unresolved" in resolution) return `Invalid value for ${field}: ${host} could not be resolved to check its addresses (${resolution.unresolved})`;
      return refused(field, `${host} resolves to ${resolution.address}: ${resolution.reason}`);
    },
  };
}

function refused(field: string, why: string): string {
  return `Invalid value for ${field}: must not point at a private, loopback, link-local or metadata address (${why})`;
}
