import winston from "winston";
import { BatchedStdout } from "./batched-stdout.ts";
import { serializeErrors } from "./serialize-errors.ts";

export type Logger = winston.Logger;

/** Fields of the moment a line is written (the active trace's ids), or undefined for none. */
export type ContextFields = () => Record<string, unknown> | undefined;

/**
 * JSON lines on stdout, written in batches off the request path (batched-stdout.ts). Never pass
 * API keys, prompts or webhook URLs with query strings in fields. `contextFields`, when given, is
 * asked for more fields at each written line (@gen/tracing's traceLogFields: `trace_id`, `span_id`).
 */
export function createLogger(service: string, level = "info", fields: Record<string, unknown> = {}, contextFields?: ContextFields): Logger {
  const formats = [winston.format.timestamp(), winston.format.errors({ stack: true }), serializeErrors(), winston.format.json()];
  if (contextFields) formats.unshift(addContextFields(contextFields)());
  const logger = winston.createLogger({
    level,
    defaultMeta: { service, ...fields },
    format: winston.format.combine(...formats),
    transports: [new BatchedStdout({ silent: level === "silent" })],
  });
  return dropBelowLevel(logger);
}

const addContextFields = (contextFields: ContextFields) =>
  winston.format((info) => {
    const extra = contextFields();
    if (extra !== undefined) Object.assign(info, extra);
    return info;
  });

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
