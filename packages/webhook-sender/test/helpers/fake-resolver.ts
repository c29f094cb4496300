import type { LookupAddress, LookupAllOptions } from "node:dns";
import { isIP } from "node:net";
import type { WebhookLookup } from "../../src/index.ts";

export interface ResolverCall {
  hostname: string;
  options: LookupAllOptions;
}

export type Answer = string[] | { code: string };

/** An injected resolver: `answer` decides per call (by host name and call number). */
export function fakeResolver(answer: (hostname: string, call: number) => Answer): WebhookLookup & { calls: ResolverCall[] } {
  const calls: ResolverCall[] = [];
  const lookup = (hostname: string, options: LookupAllOptions, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void): void => {
    calls.push({ hostname, options });
    const result = answer(hostname, calls.length);
    setImmediate(() => {
      if (Array.isArray(result)) {
        callback(
          null,
          result.map((address) => ({ address, family: isIP(address) })),
        );
      } else {
        const error: NodeJS.ErrnoException = new Error(`getaddrinfo ${result.code} ${hostname}`);
        error.code = result.code;
        error.syscall = "getaddrinfo";
        callback(error, []);
      }
    });
  };
  return Object.assign(lookup, { calls });
}

/** Maps exactly one name; anything else is ENOTFOUND. */
export function resolverFor(name: string, addresses: string[]): ReturnType<typeof fakeResolver> {
  return fakeResolver((hostname) => (hostname === name ? addresses : { code: "ENOTFOUND" }));
}
