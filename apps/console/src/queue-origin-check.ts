import type { RequestHandler } from "express";
import { ApiError, Err } from "@gen/errors";
import { isSameOrigin } from "./same-origin.ts";

/**
 * bull-board's own API (retry, clean, pause…) is called by its page with fetch and cannot carry
 * our CSRF token. Its state-changing calls must come from our origin: browsers always send Origin
 * on a non-GET fetch, and the session cookie is SameSite=Strict, so another site can neither send
 * the cookie nor forge the Origin.
 */
export function queueOriginCheck(baseUrl: string): RequestHandler {
  return (req, _res, next) => {
    if (req.method === "GET" || req.method === "HEAD") return next();
    if (!isSameOrigin(req, baseUrl, true)) throw new ApiError(Err.OriginNotAllowed, "Cross-site request refused");
    next();
  };
}
