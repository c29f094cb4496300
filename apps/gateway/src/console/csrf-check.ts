import { timingSafeEqual } from "node:crypto";
import type { Request, RequestHandler } from "express";
import { ApiError } from "@gen/errors";
import type { ConsoleLocals } from "./console-ui.ts";
import { isSameOrigin } from "./same-origin.ts";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Every state-changing console request needs the session's CSRF token (form field `_csrf` or header
 * `X-CSRF-Token`) and must not come from another origin. A refusal is 403 with 10006 ("request
 * origin not allowed"): the catalog's code for a request the browser sent on another site's behalf.
 */
export function csrfCheck(baseUrl: string): RequestHandler {
  return (req, res, next) => {
    if (SAFE.has(req.method)) return next();
    const expected = (res.locals as ConsoleLocals).csrfToken;
    if (!isSameOrigin(req, baseUrl, false) || !tokensMatch(submittedToken(req), expected)) {
      throw new ApiError(10006, "Cross-site request refused: missing or invalid CSRF token");
    }
    next();
  };
}

export function submittedToken(req: Request): string | undefined {
  const body: unknown = req.body;
  const field = body !== null && typeof body === "object" ? (body as Record<string, unknown>)._csrf : undefined;
  if (typeof field === "string") return field;
  return req.get("x-csrf-token");
}

export function tokensMatch(given: string | undefined, expected: string | undefined): boolean {
  if (!given || !expected) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
