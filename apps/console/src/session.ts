import { createHash, randomBytes } from "node:crypto";
import type { Request, RequestHandler } from "express";
import session from "express-session";
import type { RedisClient as Redis } from "@gen/queues";
import type { ConsoleConfig } from "@gen/config";
import { ApiError, Err } from "@gen/errors";
import { SESSION_COOKIE, cookieOptions } from "./cookies.ts";
import { loadSessionSecret } from "./session-secret.ts";
import { HashedIdRedisStore } from "./session-store.ts";

declare module "express-session" {
  interface SessionData {
    operatorId: string;
    email: string;
    /** Epoch ms of sign-in: sessionMaxMs counts from here, whatever the use. */
    createdAt: number;
    /** passwordStamp() of the hash at sign-in: a password reset ends every session opened before it. */
    passwordStamp: string;
  }
}

/** A fingerprint of the stored hash (new salt on every reset), never the hash itself. */
export function passwordStamp(passwordHash: string): string {
  return createHash("sha256").update(passwordHash).digest("base64url").slice(0, 22);
}

export interface ConsoleSessions {
  /** express-session on Redis; a failing Redis is 70001, as everywhere else. */
  handler: RequestHandler;
  /** The signing secret, known once `handler` has run for the first time. */
  secret(): string;
}

/**
 * Sessions in Redis (express-session + connect-redis), so every gateway and console process shares
 * them and sign-out is immediate. Nothing is stored before sign-in (saveUninitialized: false), so
 * the sign-in page costs Redis nothing. The secret may live in Redis, so the middleware is built on
 * the first request rather than at start-up; a failed build is retried by the next request.
 */
export function consoleSessions(redis: Redis, prefix: string, config: ConsoleConfig, secureCookies: boolean): ConsoleSessions {
  let secret = "";
  let ready: Promise<RequestHandler> | undefined;
  const build = async () => {
    secret = await loadSessionSecret(redis, prefix, config.sessionSecret);
    return session({
      name: SESSION_COOKIE,
      secret,
      store: new HashedIdRedisStore(redis, prefix, config),
      resave: false,
      saveUninitialized: false,
      unset: "destroy",
      genid: () => randomBytes(32).toString("base64url"),
      // No Max-Age: the cookie ends with the browser, the session with its idle time in Redis.
      cookie: cookieOptions(secureCookies),
    });
  };
  const handler: RequestHandler = (req, res, next) => {
    ready ??= build().catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    ready.then(
      (middleware) => {
        markSecure(req, secureCookies);
        middleware(req, res, (error?: unknown) => next(error ? new ApiError(Err.WorkflowUnavailable) : undefined));
      },
      () => next(new ApiError(Err.WorkflowUnavailable)),
    );
  };
  return { handler, secret: () => secret };
}

/**
 * express-session sends a Secure cookie only over a connection it believes is https (req.secure).
 * Whether our cookies are Secure is decided from the console's public address instead (TLS may end
 * at a proxy that TRUST_PROXY does not name, and loopback http is a secure context to browsers).
 */
function markSecure(req: Request, secureCookies: boolean): void {
  if (secureCookies && !req.secure) Object.defineProperty(req, "secure", { value: true, configurable: true });
}

/** Promise forms of express-session's callback methods. */
export const regenerateSession = (req: Request) =>
  new Promise<void>((resolve, reject) => req.session.regenerate((error: unknown) => (error ? reject(error) : resolve())));
export const saveSession = (req: Request) => new Promise<void>((resolve, reject) => req.session.save((error: unknown) => (error ? reject(error) : resolve())));
export const destroySession = (req: Request) =>
  new Promise<void>((resolve, reject) => req.session.destroy((error: unknown) => (error ? reject(error) : resolve())));
