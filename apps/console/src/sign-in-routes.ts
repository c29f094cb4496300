import { Router, type Request, type Response } from "express";
import type { Config } from "@gen/config";
import { findOperatorByEmail, updateOperatorPassword, type Database } from "@gen/db";
import { ApiError, Err } from "@gen/errors";
import type { Logger } from "@gen/logger";
import { hashPassword, needsRehash, verifyPassword } from "@gen/passwords";
import type { RateLimiter } from "@gen/rate-limit";
import type { ConsoleUi } from "./console-ui.ts";
import { SESSION_COOKIE, SIGN_IN_CSRF_COOKIE, cookieOptions } from "./cookies.ts";
import { csrfRefused, sessionCsrf, type SignInCsrf } from "./csrf.ts";
import { safeNext } from "./safe-next.ts";
import { isSameOrigin } from "./same-origin.ts";
import { destroySession, passwordStamp, regenerateSession, saveSession } from "./session.ts";
import type { SignInGuard } from "./sign-in-guard.ts";

export interface SignInDeps {
  config: Config;
  /** The console's public address: same-origin checks compare against it. */
  baseUrl: string;
  guard: SignInGuard;
  db: Database;
  logger: Logger;
  rateLimiter: RateLimiter;
  csrf: SignInCsrf;
  ui: ConsoleUi;
  secureCookies: boolean;
}

/** GET/POST /sign-in. The sign-in form is CSRF-protected by a signed double-submit cookie. */
export function signInRoutes(deps: SignInDeps): Router {
  const router = Router();
  const { ui } = deps;

  const showForm = (req: Request, res: Response, status: number, error?: string, email?: string) => {
    const csrfToken = deps.csrf.generateCsrfToken(req, res);
    const next = safeNext(req.method === "GET" ? req.query.next : (req.body as Record<string, unknown> | undefined)?.next);
    ui.page(res, { title: "Sign in", view: "sign-in", status, data: { csrfToken, next, email, error } });
  };

  router.get("/sign-in", (req, res) => showForm(req, res, 200));

  router.post("/sign-in", async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!isSameOrigin(req, deps.baseUrl, false) || !deps.csrf.validateRequest(req)) throw csrfRefused();
    const email = typeof body.email === "string" ? body.email.trim().toLowerCase().slice(0, 254) : "";
    const password = typeof body.password === "string" ? body.password.slice(0, 1024) : "";
    const address = req.ip ?? "?";
    const refused = await checkLimits(deps, email, address).catch(() => {
      throw new ApiError(Err.WorkflowUnavailable);
    });
    if (refused !== null) {
      deps.logger.warn("console sign-in rate limited", { email, ip: address, reason: refused.reason });
      return showForm(req, res, 429, refused.message, email);
    }
    const found = email ? await findOperatorByEmail(deps.db, email) : undefined;
    const ok = await verifyPassword(password, found && found.disabledAt === null ? found.passwordHash : null);
    if (!ok || !found) {
      if (email) await deps.guard.recordFailure(email, address).catch(() => {});
      deps.logger.warn("console sign-in refused", { email, ip: address });
      return showForm(req, res, 401, "Wrong e-mail or password.", email);
    }
    await deps.guard.recordSuccess(email, address).catch(() => {});
    const operator = await upgradeHash(deps, found, password);
    // A new session id at every sign-in (no fixation); a session the browser already carried
    // (another operator's, say) ends here rather than idling on in Redis.
    await regenerateSession(req).catch(() => {
      throw new ApiError(Err.WorkflowUnavailable);
    });
    Object.assign(req.session, { operatorId: operator.id, email: operator.email, createdAt: Date.now(), passwordStamp: passwordStamp(operator.passwordHash) });
    sessionCsrf.generateToken(req, true);
    await saveSession(req).catch(() => {
      throw new ApiError(Err.WorkflowUnavailable);
    });
    deps.logger.info("console sign-in", { operator_id: operator.id, email });
    res.clearCookie(SIGN_IN_CSRF_COOKIE, cookieOptions(deps.secureCookies));
    res.redirect(303, safeNext(body.next));
  });

  return router;
}

interface Refusal {
  reason: "address" | "account" | "backoff";
  message: string;
}

/**
 * Three limits, each against its own attacker: a bucket per client address (one address spraying
 * many accounts), a bucket per account that addresses the account never signed in from must share
 * (many addresses guessing one password), and back-off per (account, address) that doubles with
 * every failure (one address guessing one password). The operator's own known addresses skip the
 * per-account bucket, so a distributed attacker cannot lock them out.
 */
async function checkLimits(deps: SignInDeps, email: string, address: string): Promise<Refusal | null> {
  const rate = deps.config.console.signInRate;
  const [byAddress, known] = await Promise.all([
    deps.rateLimiter.take("sign-in", `ip:${address}`, rate),
    email ? deps.guard.isKnownAddress(email, address) : false,
  ]);
  if (!byAddress.allowed) return { reason: "address", message: "Too many sign-in attempts; wait a minute and try again." };
  if (!email) return null;
  if (!known && !(await deps.rateLimiter.take("sign-in", `email:${email}`, rate)).allowed) {
    return { reason: "account", message: "Too many sign-in attempts; wait a minute and try again." };
  }
  const claim = await deps.guard.claim(email, address);
  if (!claim.allowed) {
    return { reason: "backoff", message: `Too many sign-in attempts; wait ${Math.ceil(claim.retryAfterMs / 1000)} seconds and try again.` };
  }
  return null;
}

type Operator = { id: string; email: string; passwordHash: string };

/** A hash made with older, cheaper parameters is replaced now that the password is at hand. */
async function upgradeHash<T extends Operator>(deps: SignInDeps, operator: T, password: string): Promise<T> {
  if (!needsRehash(operator.passwordHash)) return operator;
  const passwordHash = await hashPassword(password);
  // Conditional on the old hash: a reset that ran meanwhile wins.
  if (!(await updateOperatorPassword(deps.db, { id: operator.id, ifHash: operator.passwordHash }, passwordHash, false))) return operator;
  deps.logger.info("console operator password rehashed with current parameters", { operator_id: operator.id });
  return { ...operator, passwordHash };
}

/** After the session check and the CSRF check: ends the session everywhere (it lives in Redis). */
export function signOutRoute(secureCookies: boolean): Router {
  const router = Router();
  router.post("/sign-out", async (req, res) => {
    await destroySession(req);
    res.clearCookie(SESSION_COOKIE, cookieOptions(secureCookies));
    res.redirect(303, "/console/sign-in");
  });
  return router;
}
