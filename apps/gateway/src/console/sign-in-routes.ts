import { randomBytes } from "node:crypto";
import { Router, type Request, type Response } from "express";
import type { Database } from "@gen/db";
import { ApiError } from "@gen/errors";
import { verifyPassword } from "@gen/passwords";
import type { Config } from "@gen/config";
import type { Logger } from "@gen/logger";
import type { RateLimiter } from "../services/rate-limiter.ts";
import type { ConsoleUi } from "./console-ui.ts";
import { SESSION_COOKIE, SIGN_IN_CSRF_COOKIE, readCookie, serializeCookie } from "./cookies.ts";
import { submittedToken, tokensMatch } from "./csrf-check.ts";
import { safeNext } from "./safe-next.ts";
import { isSameOrigin } from "./same-origin.ts";
import type { SessionStore } from "./session-store.ts";
import { signInPage } from "./sign-in-page.ts";

export interface SignInDeps {
  config: Config;
  db: Database;
  logger: Logger;
  rateLimiter: RateLimiter;
  sessions: SessionStore;
  ui: ConsoleUi;
  secureCookies: boolean;
}

/** GET/POST /sign-in and POST /sign-out. The sign-in form is CSRF-protected by a double-submit cookie. */
export function signInRoutes(deps: SignInDeps): Router {
  const router = Router();
  const { sessions, ui } = deps;

  const showForm = (req: Request, res: Response, status: number, error?: string, email?: string) => {
    let token = readCookie(req, SIGN_IN_CSRF_COOKIE);
    if (!token || !/^[\w-]{43}$/.test(token)) {
      token = randomBytes(32).toString("base64url");
      res.append("Set-Cookie", serializeCookie(SIGN_IN_CSRF_COOKIE, token, { secure: deps.secureCookies }));
    }
    const next = safeNext(req.method === "GET" ? req.query.next : (req.body as Record<string, unknown> | undefined)?.next);
    ui.page(res, { title: "Sign in", status, body: signInPage({ csrfToken: token, next, email, error }) });
  };

  router.get("/sign-in", (req, res) => showForm(req, res, 200));

  router.post("/sign-in", async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!isSameOrigin(req, deps.config.baseUrl, false) || !tokensMatch(submittedToken(req), readCookie(req, SIGN_IN_CSRF_COOKIE))) {
      throw new ApiError(10006, "Cross-site request refused: missing or invalid CSRF token");
    }
    const email = typeof body.email === "string" ? body.email.trim().toLowerCase().slice(0, 254) : "";
    const password = typeof body.password === "string" ? body.password.slice(0, 1024) : "";
    // Two buckets: one per client address (spraying many accounts), one per account (many addresses).
    const rate = deps.config.console.signInRate;
    const decisions = await Promise.all([deps.rateLimiter.take("sign-in", `ip:${req.ip ?? "?"}`, rate), deps.rateLimiter.take("sign-in", `email:${email}`, rate)]).catch(() => {
      throw new ApiError(70001);
    });
    const limited = decisions.some((d) => !d.allowed);
    if (limited) {
      deps.logger.warn("console sign-in rate limited", { email, ip: req.ip });
      return showForm(req, res, 429, "Too many sign-in attempts; wait a minute and try again.", email);
    }
    const operator = email ? await deps.db.operator.findUnique({ where: { email } }) : null;
    const ok = await verifyPassword(password, operator && operator.disabledAt === null ? operator.passwordHash : null);
    if (!ok || !operator) {
      deps.logger.warn("console sign-in refused", { email, ip: req.ip });
      return showForm(req, res, 401, "Wrong e-mail or password.", email);
    }
    // A session cookie already in the browser (another operator's, say) ends here rather than idling on in Redis.
    const previous = readCookie(req, SESSION_COOKIE);
    if (previous) await sessions.destroy(previous);
    const { token } = await sessions.create(operator);
    deps.logger.info("console sign-in", { operator_id: operator.id, email });
    res.append("Set-Cookie", serializeCookie(SESSION_COOKIE, token, { secure: deps.secureCookies }));
    res.append("Set-Cookie", serializeCookie(SIGN_IN_CSRF_COOKIE, "", { secure: deps.secureCookies, maxAgeSeconds: 0 }));
    res.redirect(303, safeNext(body.next));
  });

  return router;
}

/** After the session check and the CSRF check: ends the session everywhere (it lives in Redis). */
export function signOutRoute(sessions: SessionStore, secureCookies: boolean): Router {
  const router = Router();
  router.post("/sign-out", async (req, res) => {
    const token = readCookie(req, SESSION_COOKIE);
    if (token) await sessions.destroy(token);
    res.append("Set-Cookie", serializeCookie(SESSION_COOKIE, "", { secure: secureCookies, maxAgeSeconds: 0 }));
    res.redirect(303, "/console/sign-in");
  });
  return router;
}
