import type { AddressInfo } from "node:net";
import { loadConfig } from "@gen/config";
import { checkDatabase } from "@gen/db";
import { drainOnSignal, listenHttp } from "@gen/http";
import { createLogger } from "@gen/logger";
import { checkRedis } from "@gen/queues";
import { startTracing, traceLogFields } from "@gen/tracing";
import { createConsoleApp } from "./console-app.ts";
import { buildConsoleDeps, closeConsoleDeps } from "./console-deps.ts";

/** `pnpm start:console`: the console alone on CONSOLE_PORT, so it can stay off the public listener. */
async function main(): Promise<void> {
  const config = loadConfig();
  const tracing = startTracing(config.tracing, "console");
  const logger = createLogger("console", config.logLevel, {}, config.tracing && traceLogFields);
  const deps = buildConsoleDeps(config, logger);
  await checkDatabase(deps.db, config.databaseUrl);
  await checkRedis(deps.redis, config.redis);

  const server = await listenHttp(createConsoleApp(deps), config.console.port, config.http, logger);
  const port = (server.address() as AddressInfo).port;
  logger.info("console listening", { port, base_url: config.console.baseUrl });
  process.send?.({ ready: "console", port });

  drainOnSignal(server, "console", logger, async () => {
    await closeConsoleDeps(deps);
    await tracing.shutdown();
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`console: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
