import winston from "winston";

const MAX_STACK = 2000;

/**
 * JSON.stringify turns an Error into `{}`, so `{ err: error }` in a log line said nothing. Errors in
 * fields become { name, message, code, stack }; a `cause` is followed one level. Only these fields:
 * an HTTP client's error object also carries the request options, URL included, and webhook URLs
 * hold callers' secrets.
 */
export const serializeErrors = winston.format((info) => {
  for (const [key, value] of Object.entries(info)) {
    if (value instanceof Error) info[key] = describe(value, 1);
  }
  return info;
});

function describe(error: Error, depth: number): Record<string, unknown> {
  const code = (error as { code?: unknown }).code;
  const out: Record<string, unknown> = { name: error.name, message: error.message };
  if (typeof code === "string" || typeof code === "number") out.code = code;
  if (error.stack) out.stack = error.stack.slice(0, MAX_STACK);
  if (depth > 0 && error.cause instanceof Error) out.cause = describe(error.cause, depth - 1);
  return out;
}
