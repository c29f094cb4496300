import winston from "winston";
import { BatchedStdout } from "./batched-stdout.ts";
import { serializeErrors } from "./serialize-errors.ts";

export type Logger = winston.Logger;

/**
 * JSON lines on stdout, written in batches off the request path (batched-stdout.ts). Never pass
 * API keys, prompts or webhook URLs with query strings in fields.
 */
export function createLogger(service: string, level = "info", fields: Record<string, unknown> = {}): Logger {
  return winston.createLogger({
    level,
    defaultMeta: { service, ...fields },
    format: winston.format.combine(winston.format.timestamp(), winston.format.errors({ stack: true }), serializeErrors(), winston.format.json()),
    transports: [new BatchedStdout({ silent: level === "silent" })],
  });
}
