import cluster from "node:cluster";
import type { AddressInfo } from "node:net";
import { loadConfig, type Config } from "@gen/config";
import { checkDatabase } from "@gen/db";
import { drainOnSignal, listenHttp } from "@gen/http";
import { createLogger } from "@gen/logger";
import { shareMetricsWithPrimary, startMetricsServer } from "@gen/metrics";
import { checkRedis } from "@gen/queues";
import { startTracing, traceLogFields } from "@gen/tracing";
import { createApp } from "./create-app.ts";
import { runCluster } from "./run-cluster.ts";
import { buildDeps, closeDeps } from "./services/build-deps.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  if (cluster.isPrimary && config.gatewayProcesses > 1) return runCluster(config, createLogger("gateway", config.logLevel));
  await serve(config);
}

/** One gateway process: alone, or one of GATEWAY_PROCESSES children of run-cluster.ts. */
async function serve(config: Config): Promise<void> {
  const tracing = startTracing(config.tracing, "gateway");
  // In a cluster each line says which process wrote it.
  const logger = createLogger("gateway", config.logLevel, cluster.isWorker ? { pid: process.pid } : {}, config.tracing && traceLogFields);
  const deps = buildDeps(config, logger);
  await checkDatabase(deps.db, config.databaseUrl);
  await checkRedis(deps.redis, config.redis);
  await checkRedis(deps.limiterRedis, config.redis);

  const server = await listenHttp(createApp(deps), config.port, config.http, logger);
  const port = (server.address() as AddressInfo).port;
  // A cluster's children cannot all bind the metrics port: the primary serves their merged metrics.
  if (cluster.isWorker) shareMetricsWithPrimary(deps.metrics);
  const metricsServer = cluster.isWorker ? undefined : await startMetricsServer(deps.metrics, config.gatewayMetricsPort, config.http, logger, "gateway");
  logger.info("gateway listening", { port, base_url: config.baseUrl });
  process.send?.({ ready: "gateway", port });

  drainOnSignal(server, "gateway", logger, async () => {
    metricsServer?.close();
    await closeDeps(deps);
    await tracing.shutdown();
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`gateway: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
