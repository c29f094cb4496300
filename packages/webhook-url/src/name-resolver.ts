import { promises as dns } from "node:dns";

/** The two queries the submission-time URL check makes; `dns.promises.Resolver`'s methods. */
export interface NameResolver {
  resolve4(hostname: string): Promise<string[]>;
  resolve6(hostname: string): Promise<string[]>;
}

/**
 * c-ares, not `dns.lookup`: getaddrinfo holds one of libuv's 4 threads until the system resolver
 * gives up, so names that hang (a client can send 8 per request) would stall every file read,
 * hash and reconnect of the process. c-ares queries hold a socket, no thread. One try, each query
 * given up after `timeoutMs`.
 */
export function createNameResolver(timeoutMs: number): NameResolver {
  return new dns.Resolver({ timeout: timeoutMs, tries: 1 });
}
