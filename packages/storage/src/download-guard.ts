import { lookup as dnsLookup } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { SecureContextOptions } from "node:tls";
import { createAddressPolicy, createGuardedLookup, type AddressLookup, type AddressPolicy } from "@gen/webhook-url";

const IDLE_SOCKET_MS = 4_000;

export interface DownloadGuardOptions {
  /** `UPSTREAM_ALLOWED_CIDRS`: ranges an upstream's files may come from; throws on a malformed entry. */
  allowedCidrs: readonly string[];
  /** Resolver with `dns.lookup`'s `{ all: true }` signature; defaults to `dns.lookup`. */
  lookup?: AddressLookup;
  /** TEST ONLY: trusted CAs instead of the system store (see @gen/webhook-sender). */
  ca?: SecureContextOptions["ca"];
}

/**
 * The SSRF guard of upstream downloads: webhook delivery's address policy and guarded lookup,
 * inside the agents every hop's socket comes from, so a socket only ever connects to an address
 * that was checked. One per process: the agents pool keep-alive connections to the upstream.
 */
export interface DownloadGuard {
  policy: AddressPolicy;
  agents: { http: http.Agent; https: https.Agent };
  close(): void;
}

export function createDownloadGuard(options: DownloadGuardOptions): DownloadGuard {
  const policy = createAddressPolicy(options.allowedCidrs);
  const lookup = createGuardedLookup(options.lookup ?? dnsLookup, policy);
  // Agent options win over per-request ones in Node, so no request can swap the lookup. Idle
  // sockets close below the usual 5 s server keep-alive, as in webhook-sender: downloads are not
  // retried, so a pooled socket the server is closing must rarely be picked.
  const pool = { keepAlive: true, timeout: IDLE_SOCKET_MS, lookup };
  const agents = {
    http: new http.Agent(pool),
    https: new https.Agent({ ...pool, ...(options.ca === undefined ? {} : { ca: options.ca }) }),
  };
  return {
    policy,
    agents,
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
