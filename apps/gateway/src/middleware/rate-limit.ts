import type { RequestHandler } from "express";
import type { RateConfig } from "@gen/config";
import { ApiError, Err } from "@gen/errors";
import type { RateDecision } from "@gen/rate-limit";
import { confirmKey } from "../services/authenticate-key.ts";
import type { GatewayDeps } from "../services/gateway-deps.ts";
import { authenticatedKey } from "./authenticate.ts";

/**
 * Per-user limits shared by every gateway through Redis. Redis away means 70001 before any work,
 * except for reads served from PostgreSQL (polls, the account): those fall back to this
 * process's own counters, so polling, the documented fallback of webhooks, outlives a Redis outage.
 *
 * The same call reads the API key's revocation marker (written by `pnpm admin revoke-key`), which
 * is what makes a key answered from the KeyCache safe; a cached key whose call fell back to the
 * local counters is read again from PostgreSQL.
 */
export function rateLimit(deps: Pick<GatewayDeps, "rateLimiter" | "keyCache" | "db">, kind: "poll" | "submit", rate: RateConfig): RequestHandler {
  const limiter = deps.rateLimiter;
  return async (_req, res, next) => {
    const key = authenticatedKey(res);
    let decision: RateDecision & { local?: boolean };
    try {
      decision = kind === "poll" ? await limiter.takeOrLocal(kind, key.userId, rate, key.keyHash) : await limiter.take(kind, key.userId, rate, key.keyHash);
    } catch {
      throw new ApiError(Err.WorkflowUnavailable);
    }
    if (decision.revoked) {
      deps.keyCache.delete(key.keyHash);
      throw new ApiError(Err.KeyRevoked);
    }
    if (decision.local === true && key.fromCache) await confirmKey(deps.db, key.keyHash, deps.keyCache);
    res.setHeader("RateLimit-Limit", String(decision.limit));
    res.setHeader("RateLimit-Remaining", String(decision.remaining));
    res.setHeader("RateLimit-Reset", String(decision.resetSeconds));
    if (!decision.allowed) {
      throw new ApiError(Err.RateLimited, `Rate limit exceeded; retry after ${decision.retryAfterSeconds} s`, {
        "Retry-After": String(decision.retryAfterSeconds),
      });
    }
    next();
  };
}
