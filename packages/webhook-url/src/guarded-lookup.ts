import type { LookupAddress, LookupAllOptions, LookupOptions } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import type { AddressPolicy } from "./address-policy.ts";
import { BlockedAddressError } from "./blocked-address-error.ts";
import { ResolutionError } from "./resolution-error.ts";

/** A resolver with `dns.lookup`'s `{ all: true }` signature; `dns.lookup` itself by default. */
export type AddressLookup = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * The `lookup` for an agent's sockets (webhook delivery and upstream downloads). Node calls it once per new connection and connects only to
 * what it hands back, so checking here covers every connection and leaves no window for a
 * second, different answer (DNS rebinding). The whole answer is refused when any record is
 * blocked, as docs/api.md#private-address-block says, not just the blocked records.
 */
export function createGuardedLookup(resolve: AddressLookup, policy: AddressPolicy): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    let answered = false;
    const answer = (error: NodeJS.ErrnoException | null, records: LookupAddress[]): void => {
      // A misbehaving resolver may call back twice; only the first answer counts.
      if (answered) return;
      answered = true;
      if (error) {
        callback(error, options.all ? [] : "", 0);
      } else if (options.all) {
        callback(null, records);
      } else {
        const first = records[0] as LookupAddress;
        callback(null, first.address, first.family);
      }
    };

    // family and hints come from Node's defaults; all: true is forced so every record is seen.
    const query: LookupAllOptions = { all: true };
    if (options.family !== undefined) query.family = options.family;
    if (options.hints !== undefined) query.hints = options.hints;

    try {
      resolve(hostname, query, (error, records) => {
        if (error) return answer(new ResolutionError(hostname, error), []);
        const checked = screen(hostname, records, policy);
        if (checked instanceof Error) return answer(checked, []);
        answer(null, checked);
      });
    } catch (error) {
      answer(new ResolutionError(hostname, error), []);
    }
  };
}

function screen(hostname: string, records: unknown, policy: AddressPolicy): LookupAddress[] | Error {
  if (!Array.isArray(records) || records.length === 0) return new ResolutionError(hostname);
  const checked: LookupAddress[] = [];
  for (const record of records as unknown[]) {
    const address = typeof record === "object" && record !== null ? (record as { address?: unknown }).address : undefined;
    if (typeof address !== "string") return new ResolutionError(hostname, new Error("resolver returned a record without an address"));
    const reason = policy.check(address);
    if (reason !== null) return new BlockedAddressError(hostname, address, reason);
    // The family is derived, not taken from the resolver, so it always matches the address.
    checked.push({ address, family: isIP(address) });
  }
  return checked;
}
