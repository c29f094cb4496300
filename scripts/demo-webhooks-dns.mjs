// Preloaded (`--import`, through NODE_OPTIONS) into the gateway and worker that `pnpm demo:webhooks`
// starts: the demo receiver's host name resolves to its loopback address in those processes, as a
// hosts-file entry would make it on the machine, without root. DEMO_WEBHOOK_HOSTS="name=127.x.y.z"
// (comma-separated for several). Only exact names, only 127.0.0.0/8 addresses; every other name is
// resolved as before. The address is still checked like any other: the service sends to it only
// because WEBHOOK_ALLOWED_CIDRS lists it (docs/webhooks-local.md).
import dns from "node:dns";
import { isIP } from "node:net";
import { syncBuiltinESMExports } from "node:module";

const hosts = new Map(
  (process.env.DEMO_WEBHOOK_HOSTS ?? "")
    .split(",")
    .filter(Boolean)
    .map((entry) => {
      const [name = "", address = ""] = entry.split("=");
      if (isIP(address) !== 4 || !address.startsWith("127.")) {
        throw new Error(`DEMO_WEBHOOK_HOSTS may map names to 127.0.0.0/8 addresses only, got ${JSON.stringify(entry)}`);
      }
      return [name.toLowerCase(), address];
    }),
);

if (hosts.size > 0) {
  const original = dns.lookup;
  dns.lookup = function lookup(hostname, options, callback) {
    const address = typeof hostname === "string" ? hosts.get(hostname.toLowerCase()) : undefined;
    if (address === undefined) return original.call(dns, hostname, options, callback);
    const done = typeof options === "function" ? options : callback;
    const all = typeof options === "object" && options !== null && options.all === true;
    process.nextTick(() => (all ? done(null, [{ address, family: 4 }]) : done(null, address, 4)));
  };
  // ESM importers (`import { lookup } from "node:dns"`) see the same function.
  syncBuiltinESMExports();
}
