import winston from "winston";
import { serializeErrors } from "./serialize-errors.ts";

export type Logger = winston.Logger;

/** JSON lines on stdout. Never pass API keys, prompts or webhook URLs with query strings in fields. */
export function createLogger(service: string, level = "info"): Logger {
  return winston.createLogger({
    level,
    defaultMeta: { service },
    format: winston.format.combine(winston.format.timestamp(), winston.format.errors({ stack: true }), serializeErrors(), winston.format.json()),
    transports: [new winston.transports.Console({ silent: level === "silent" })],
  });
}
