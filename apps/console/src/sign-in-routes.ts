import { Router, type Request, type Response } from "express";
import type { Config } from "@gen/config";
import { findOperatorByEmail, updateOperatorPassword, type Database } from "@gen/db";
import { ApiError, Err } from "@gen/errors";
import type { Logger } from "@gen/logger";
import { HashingAbandoned, HashingBusy, hashPassword, needsRehash, verifyPassword } from "@gen/passwords";
import { clientLimitKey, type RateLimiter } from "@gen/rate-limit";
import type { ConsoleUi } from "./console-ui.ts";
import { PRE_SIGN_IN_COOKIE, SESSION_COOKIE, SIGN_IN_CSRF_COOKIE, cookieOptions } from "./cookies.ts";
import { csrfRefused, sessionCsrf, type SignInCsrf } from "./csrf.ts";
import type { PreSignInSessions } from "./pre-sign-in-session.ts";
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
  preSignIn: PreSignInSessions;
  ui: ConsoleUi;
  secureCookies: boolean;
}

const TOO_MANY = "Too many sign-in attempts; wait a minute and try again.";

/**
 * GET/POST /sign-in. The sign-in form is CSRF-protected by a signed double-submit cookie bound to a
 * pre-sign-in session, good for one attempt: every form served, on a GET or after a post, is a
 * fresh one.
 */
export function signInRoutes(deps: SignInDeps): Router {
  const router = Router();
  const { ui } = deps;

  const showForm = (req: Request, res: Response, status: number, error?: string, email?: string) => {
    // Never the session the browser already has: it may have been used by a post that got no new
    // form (a closed connection, a 70001 page, a double submit), and would refuse the next post.
    deps.preSignIn.start(req, res);
    const csrfToken = deps.csrf.generateCsrfToken(req, res, { overwrite: true });
    const next = safeNext(req.method === "GET" ? req.query.next : (req.body as Record<string, unknown> | undefined)?.next);
    ui.page(res, { title: "Sign in", view: "sign-in", status, data: { csrfToken, next, email, error } });
  };

  router.get("/sign-in", (req, res) => showForm(req, res, 200));

  router.post("/sign-in", async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const preSignIn = deps.preSignIn.current(req);
    if (!isSameOrigin(req, deps.baseUrl, false) || preSignIn === undefined || !deps.csrf.validateRequest(req)) throw csrfRefused();
    const email = typeof body.email === "string" ? body.email.trim().toLowerCase().slice(0, 254) : "";
    const password = typeof body.password === "string" ? body.password.slice(0, 1024) : "";
    const address = clientLimitKey(req.ip);
    const refused = await unavailableOnError(checkLimits(deps, email, address));
    if (refused !== null) {
      deps.logger.warn("console sign-in rate limited", { email, ip: req.ip, reason: refused.reason });
      res.set("Retry-After", String(refused.retryAfterSeconds));
      return showForm(req, res, 429, refused.message, email);
    }
    // After the limits, so that a flood past them writes nothing more to Redis; before the password
    // check, so that one form is one check. A used form's cookies are cleared: the next GET starts over.
    if (!(await unavailableOnError(deps.preSignIn.consume(preSignIn)))) {
      res.clearCookie(SIGN_IN_CSRF_COOKIE, cookieOptions(deps.secureCookies));
      res.clearCookie(PRE_SIGN_IN_COOKIE, cookieOptions(deps.secureCookies));
      throw csrfRefused();
    }
    const found = email ? await findOperatorByEmail(deps.db, email) : undefined;
    let ok: boolean;
    try {
      ok = await verifyPassword(password, found && found.disabledAt === null ? found.passwordHash : null, { client: address, signal: clientGone(res) });
    } catch (error) {
      if (error instanceof HashingAbandoned) {
        // Nobody is left to answer; not a failure either, since no password was checked.
        deps.logger.info("console sign-in abandoned before its hash", { email, ip: req.ip });
        return;
      }
      if (!(error instanceof HashingBusy)) throw error;
      deps.logger.warn("console sign-in refused: hashing queue full", { email, ip: req.ip });
      res.set("Retry-After", String(error.retryAfterSeconds));
      return showForm(req, res, 429, `Too many sign-ins at once; wait ${error.retryAfterSeconds} seconds and try again.`, email);
    }
    if (!ok || !found) {
      if (email) await deps.guard.recordFailure(email, address).catch(() => {});
      deps.logger.warn("console sign-in refused", { email, ip: req.ip });
      return showForm(req, res, 401, "Wrong e-mail or password.", email);
    }
    await deps.guard.recordSuccess(email, address).catch(() => {});
    const operator = await upgradeHash(deps, found, password, address);
    // A new session id at every sign-in (no fixation); a session the browser already carried
    // (another operator's, say) ends here rather than idling on in Redis.
    await unavailableOnError(regenerateSession(req));
    Object.assign(req.session, { operatorId: operator.id, email: operator.email, createdAt: Date.now(), passwordStamp: passwordStamp(operator.passwordHash) });
    sessionCsrf.generateToken(req, true);
    await unavailableOnError(saveSession(req));
    deps.logger.info("console sign-in", { operator_id: operator.id, email });
    res.clearCookie(SIGN_IN_CSRF_COOKIE, cookieOptions(deps.secureCookies));
    res.clearCookie(PRE_SIGN_IN_COOKIE, cookieOptions(deps.secureCookies));
    res.redirect(303, safeNext(body.next));
  });

  return router;
}

/** Redis behind sessions and limits failing is 70001, as everywhere else. */
function unavailableOnError<T>(work: Promise<T>): Promise<T> {
  return work.catch(() => {
    throw new ApiError(Err.WorkflowUnavailable);
  });
}

/** Fires when the client closes its connection before the answer is sent: its hash is not worth starting. */
function clientGone(res: Response): AbortSignal {
  const gone = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) gone.abort();
  };
  if (res.socket === null || res.socket.destroyed) gone.abort();
  else res.once("close", onClose);
  return gone.signal;
}

interface Refusal {
  reason: "address" | "account" | "backoff";
  message: string;
  retryAfterSeconds: number;
}

/**
 * Three limits, each against its own attacker: a bucket per client address (its limit key: an
 * IPv6 client's whole /64) (one address spraying
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
  if (!byAddress.allowed) return { reason: "address", message: TOO_MANY, retryAfterSeconds: byAddress.retryAfterSeconds };
  if (!email) return null;
  const byAccount = known ? null : await deps.rateLimiter.take("sign-in", `email:${email}`, rate);
  if (byAccount && !byAccount.allowed) return { reason: "account", message: TOO_MANY, retryAfterSeconds: byAccount.retryAfterSeconds };
  const claim = await deps.guard.claim(email, address);
  if (!claim.allowed) {
    const seconds = Math.ceil(claim.retryAfterMs / 1000);
    return { reason: "backoff", message: `Too many sign-in attempts; wait ${seconds} seconds and try again.`, retryAfterSeconds: Math.max(1, seconds) };
  }
  return null;
}

type Operator = { id: string; email: string; passwordHash: string };

/** A hash made with older, cheaper parameters is replaced now that the password is at hand. */
async function upgradeHash<T extends Operator>(deps: SignInDeps, operator: T, password: string, address: string): Promise<T> {
  if (!needsRehash(operator.passwordHash)) return operator;
  // With the hashing queue full, the old hash serves this sign-in and is raised at a later one.
  const passwordHash = await hashPassword(password, { client: address }).catch((error: unknown) => {
    if (error instanceof HashingBusy) return null;
    throw error;
  });
  if (passwordHash === null) return operator;
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
