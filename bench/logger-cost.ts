// CPU per request log line: winston's Console transport (one stdout write per line, as before)
// against @gen/logger's batched transport, both with the same formats. Run with stdout on a file
// or a pipe, as in production, e.g.
//   pnpm exec tsx --conditions=@gen/source bench/logger-cost.ts > /tmp/lines.log
// (results go to stderr). Lines are logged 64 per event-loop turn, like requests finishing.
import winston from "winston";
import { createLogger } from "@gen/logger";

const LINES = Number(process.env.LINES ?? 200_000);
const PER_TURN = 64;
const fields = {
  request_id: "req_0123456789abcdef01234567",
  user_id: "usr_0123456789abcdef01234567",
  method: "POST",
  path: "/api/v1/images/generations",
  status: 202,
  duration_ms: 3.217,
};

const consoleLogger = () =>
  winston.createLogger({
    level: "info",
    defaultMeta: { service: "gateway" },
    format: winston.format.combine(winston.format.timestamp(), winston.format.errors({ stack: true }), winston.format.json()),
    transports: [new winston.transports.Console()],
  });

async function measure(name: string, logger: winston.Logger): Promise<void> {
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  for (let i = 0; i < 5_000; i++) logger.info("request", fields); // warm-up
  await new Promise((resolve) => setTimeout(resolve, 100));
  const before = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < LINES; i += PER_TURN) {
    for (let j = 0; j < PER_TURN; j++) logger.info("request", fields);
    await turn();
  }
  await new Promise((resolve) => setTimeout(resolve, 100)); // the last batch's timer
  const used = process.cpuUsage(before);
  const cpuUs = used.user + used.system;
  process.stderr.write(
    `${name}: ${(cpuUs / LINES).toFixed(2)} µs CPU per line (system ${(used.system / LINES).toFixed(2)}), ${((LINES / (performance.now() - started - 100)) * 1000).toFixed(0)} lines/s\n`,
  );
}

await measure("winston Console (before)", consoleLogger());
await measure("@gen/logger batched", createLogger("gateway", "info"));
await measure("winston Console (before), again", consoleLogger());
await measure("@gen/logger batched, again", createLogger("gateway", "info"));
