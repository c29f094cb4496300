import winston from "winston";
import { BatchedStdout } from "./batched-stdout.ts";
import { serializeErrors } from "./serialize-errors.ts";

export type Logger = winston.Logger;

/**
 * JSON lines on stdout, written in batches off the request path (batched-stdout.ts). Never pass
 * API keys, prompts or webhook URLs with query strings in fields.
 */
export function createLogger(service: string, level = "info", fields: Record<string, unknown> = {}): Logger {
  const logger = winston.createLogger({
    level,
    defaultMeta: { service, ...fields },
    format: winston.format.combine(winston.format.timestamp(), winston.format.errors({ stack: true }), serializeErrors(), winston.format.json()),
    transports: [new BatchedStdout({ silent: level === "silent" })],
  });
  return dropBelowLevel(logger);
}

/**
 * winston runs every format (timestamp, error serialisation, JSON.stringify) on a line before its
 * transports compare levels, so a `debug` line at `info` cost as much as a written one (the
 * delivery worker logs each success at debug: ~25 µs per attempt). A line no transport takes now
 * returns before any of that. Per call, not once: the logger's and the transports' levels can change.
 */
function dropBelowLevel(logger: Logger): Logger {
  const methods = logger as unknown as Record<string, (...args: unknown[]) => Logger>;
  for (const level of Object.keys(logger.levels)) {
    const write = methods[level]!;
    // A function, not an arrow: logger.child() calls it on the child, whose fields it must keep.
    methods[level] = function (this: Logger | undefined, ...args: unknown[]): Logger {
      const self = this ?? logger;
      return self.isLevelEnabled(level) ? write.apply(self, args) : self;
    };
  }
  return logger;
}
