import type { RequestHandler, Response } from "express";
import { clientLimitKey } from "@gen/rate-limit";
import { authenticateKey, type AuthenticatedKey } from "../services/authenticate-key.ts";
import type { GatewayDeps } from "../services/gateway-deps.ts";

/**
 * Must be followed by rateLimit (rate-limit.ts) on every route: a key answered from the KeyCache is
 * only confirmed unrevoked by the limiter's Redis call.
 */
export function authenticate(deps: Pick<GatewayDeps, "db" | "badKeyThrottle" | "keyCache" | "rateLimiter">): RequestHandler {
  return async (req, res, next) => {
    // req.ip honours TRUST_PROXY (create-app.ts); it is read only when the throttle needs it, not
    // for a cached key (its proxy-addr walk was ~0.6 % of the gateway's CPU per submission). The cache is used
    // only while the limiter can reach Redis, where the revocation markers are. An IPv6 client
    // counts by its /64 (clientLimitKey), or one subscriber would have 2^64 buckets.
    const auth = await authenticateKey(
      deps.db,
      req.headers.authorization,
      { address: () => clientLimitKey(req.ip), by: deps.badKeyThrottle },
      { keys: deps.keyCache, use: deps.rateLimiter.sharedAvailable },
    );
    res.locals.userId = auth.userId;
    res.locals.apiKey = auth;
    next();
  };
}

export const authenticatedKey = (res: Response): AuthenticatedKey => res.locals.apiKey as AuthenticatedKey;
