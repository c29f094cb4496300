import type { AddressInfo } from "node:net";
import { createLogger } from "@gen/logger";
import { createUpstreamSim } from "./create-upstream-sim.ts";

// Loopback unless told otherwise: it is a test and demo tool with no authentication.
const port = Number(process.env.UPSTREAM_SIM_PORT ?? 8090);
const host = process.env.UPSTREAM_SIM_HOST ?? "127.0.0.1";
const publicUrl = process.env.UPSTREAM_SIM_PUBLIC_URL || undefined;
const logger = createLogger("upstream-sim", process.env.LOG_LEVEL ?? "info");

const server = createUpstreamSim({ publicUrl }).listen(port, host);
server.once("listening", () => {
  logger.info("upstream simulator listening", { host, port: (server.address() as AddressInfo).port });
  process.send?.({ ready: "upstream-sim" });
});
server.once("error", (error) => {
  process.stderr.write(`upstream-sim: ${error.message}\n`);
  process.exit(1);
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
