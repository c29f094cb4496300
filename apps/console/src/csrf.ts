import { timingSafeEqual } from "node:crypto";
import type { Request, RequestHandler } from "express";
import { doubleCsrf } from "csrf-csrf";
import { csrfSync } from "csrf-sync";
import { ApiError, Err } from "@gen/errors";
import { SIGN_IN_CSRF_COOKIE, cookieOptions } from "./cookies.ts";
import { isSameOrigin } from "./same-origin.ts";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/** The token a console form or script sends: form field `_csrf` or header `X-CSRF-Token`. */
function submittedToken(req: Request): string | undefined {
  const body: unknown = req.body;
  const field = body !== null && typeof body === "object" ? (body as Record<string, unknown>)._csrf : undefined;
  if (typeof field === "string") return field;
  return req.get("x-csrf-token");
}

/** A refusal is 403 with 10006 ("request origin not allowed"): a request the browser sent on another site's behalf. */
export const csrfRefused = () => new ApiError(Err.OriginNotAllowed, "Cross-site request refused: missing or invalid CSRF token");

/** Synchronizer tokens (csrf-sync): one random token per session, kept in the session itself. */
export const sessionCsrf = csrfSync({ getTokenFromRequest: submittedToken, size: 32 });

/**
 * Every state-changing console request after sign-in needs the session's token and must not come
 * from another origin.
 */
export function csrfCheck(baseUrl: string): RequestHandler {
  return (req, _res, next) => {
    if (SAFE.has(req.method)) return next();
    if (!isSameOrigin(req, baseUrl, false) || !sameToken(sessionCsrf.getTokenFromRequest(req), sessionCsrf.getTokenFromState(req))) throw csrfRefused();
    next();
  };
}

// csrf-sync's own isRequestValid compares with ===; the comparison stays constant-time, as before.
function sameToken(given: string | null | undefined, expected: string | null | undefined): boolean {
  if (typeof given !== "string" || typeof expected !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export type SignInCsrf = ReturnType<typeof signInCsrf>;

/**
 * The sign-in form comes before any session, so its token is a signed double-submit cookie
 * (csrf-csrf): the form field must equal the cookie, and the cookie must carry our HMAC over the
 * pre-sign-in session's id (pre-sign-in-session.ts), so the pair works in that session only. A
 * request without one is refused by the route before the token is checked.
 */
export function signInCsrf(getSecret: () => string, secureCookies: boolean, preSignIn: (req: Request) => string | undefined) {
  return doubleCsrf({
    getSecret,
    getSessionIdentifier: (req) => preSignIn(req) ?? "",
    cookieName: SIGN_IN_CSRF_COOKIE,
    cookieOptions: cookieOptions(secureCookies),
    size: 32,
    getCsrfTokenFromRequest: submittedToken,
  });
}
