import type { AddressInfo } from "node:net";
import { loadConfig } from "@gen/config";
import { checkDatabase } from "@gen/db";
import { drainOnSignal } from "@gen/http";
import { createLogger } from "@gen/logger";
import { startMetricsServer } from "@gen/metrics";
import { checkRedis } from "@gen/queues";
import { createApp } from "./create-app.ts";
import { buildDeps, closeDeps } from "./services/build-deps.ts";


async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger("gateway", config.logLevel);
  const deps = buildDeps(config, logger);
  await checkDatabase(deps.db, config.databaseUrl);
  await checkRedis(deps.redis, config.redis);

  const server = createApp(deps).listen(config.port);
  await new Promise<void>((resolve, reject) => server.once("listening", resolve).once("error", reject));
  const port = (server.address() as AddressInfo).port;
  const metricsServer = await startMetricsServer(deps.metrics, config.gatewayMetricsPort, logger, "gateway");
  logger.info("gateway listening", { port, base_url: config.baseUrl });
  process.send?.({ ready: "gateway", port });

  drainOnSignal(server, "gateway", logger, async () => {
    metricsServer?.close();
    await closeDeps(deps);
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`gateway: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
