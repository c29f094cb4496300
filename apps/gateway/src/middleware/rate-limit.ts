import type { RequestHandler } from "express";
import type { RateConfig } from "@gen/config";
import { ApiError, Err } from "@gen/errors";
import type { RateDecision } from "@gen/rate-limit";
import type { GatewayDeps } from "../services/gateway-deps.ts";
import { authenticatedKey } from "./authenticate.ts";

/**
 * Per-user limits shared by every gateway through Redis. Redis away means 70001 before any work,
 * except for reads served from PostgreSQL (polls, the account): those fall back to this
 * process's own counters, so polling, the documented fallback of webhooks, outlives a Redis outage.
 */
export function rateLimit(deps: Pick<GatewayDeps, "rateLimiter">, kind: "poll" | "submit", rate: RateConfig): RequestHandler {
  const limiter = deps.rateLimiter;
  return async (_req, res, next) => {
    const key = authenticatedKey(res);
    let decision: RateDecision;
    try {
      decision = kind === "poll" ? await limiter.takeOrLocal(kind, key.userId, rate) : await limiter.take(kind, key.userId, rate);
    } catch {
      throw new ApiError(Err.WorkflowUnavailable);
    }
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
