// Preloaded (`--import`) into app processes the fault suite starts: the apps resolve webhook names
// with dns.lookup, and a test must never send them to real DNS. FAULT_HOSTS="name=127.x.y.z,..."
// maps names to loopback addresses ("*.domain=..." maps every name one label below the domain);
// every other name is answered as before.
import dns, { type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { syncBuiltinESMExports } from "node:module";

type Callback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

const hosts = new Map(
  (process.env.FAULT_HOSTS ?? "")
    .split(",")
    .filter(Boolean)
    .map((entry) => entry.split("=") as [string, string]),
);

for (const address of hosts.values()) {
  if (!address.startsWith("127.")) throw new Error(`FAULT_HOSTS may map names to 127.0.0.0/8 only, got ${address}`);
}

const original = dns.lookup;
const patched = function (hostname: string, options: unknown, callback?: Callback): void {
  const address = hosts.get(hostname) ?? hosts.get(`*.${hostname.slice(hostname.indexOf(".") + 1)}`);
  if (address === undefined) return (original as (...args: unknown[]) => void)(hostname, options, callback);
  const done = (typeof options === "function" ? options : callback) as Callback;
  const all = typeof options === "object" && options !== null && (options as { all?: boolean }).all === true;
  const family = isIP(address);
  process.nextTick(() => (all ? done(null, [{ address, family }]) : done(null, address, family)));
};
(dns as { lookup: unknown }).lookup = patched;
// ESM importers (`import { lookup } from "node:dns"`) see the replacement too.
syncBuiltinESMExports();
