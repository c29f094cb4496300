import type { RequestHandler } from "express";
import { ApiError, Err } from "@gen/errors";

const EXPOSED = "X-Request-Id, Location, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset";

/**
 * Browser calls carry Origin: only configured origins may use the API (10006 otherwise) and they
 * get CORS headers. Calls without Origin are server-to-server and pass untouched.
 */
export function originGuard(allowedOrigins: readonly string[]): RequestHandler {
  const allowed = new Set(allowedOrigins);
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin === undefined) return next();
    if (!allowed.has(origin)) return next(new ApiError(Err.OriginNotAllowed));
    res.setHeader("Access-Control-Allow-Origin", origin);
    res.setHeader("Vary", "Origin");
    res.setHeader("Access-Control-Expose-Headers", EXPOSED);
    if (req.method === "OPTIONS") {
      res.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res.setHeader("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key");
      res.setHeader("Access-Control-Max-Age", "600");
      res.status(204).end();
      return;
    }
    next();
  };
}
