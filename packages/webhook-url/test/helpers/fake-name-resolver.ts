import { isIP } from "node:net";
import type { NameResolver } from "@gen/webhook-url";

/** What a name answers: its addresses of both families, or an error code for both queries. */
export type NameAnswer = string[] | { code: string };

/**
 * An injected resolver with c-ares's answers: a family without records is ENODATA. `calls` lists
 * the names asked for (once per name: the A query).
 */
export function fakeNameResolver(answer: (hostname: string) => NameAnswer): NameResolver & { calls: string[] } {
  const calls: string[] = [];
  const query = (family: 4 | 6) => async (hostname: string) => {
    if (family === 4) calls.push(hostname);
    await new Promise((resolve) => setImmediate(resolve));
    const result = answer(hostname);
    if (!Array.isArray(result)) throw Object.assign(new Error(`query ${result.code} ${hostname}`), { code: result.code });
    const addresses = result.filter((address) => isIP(address) === family);
    if (addresses.length === 0) throw Object.assign(new Error(`query ENODATA ${hostname}`), { code: "ENODATA" });
    return addresses;
  };
  return { resolve4: query(4), resolve6: query(6), calls };
}
