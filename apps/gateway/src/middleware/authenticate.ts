import type { RequestHandler, Response } from "express";
import { clientLimitKey } from "@gen/rate-limit";
import { authenticateKey, type AuthenticatedKey } from "../services/authenticate-key.ts";
import type { GatewayDeps } from "../services/gateway-deps.ts";

export function authenticate(deps: Pick<GatewayDeps, "db" | "badKeyThrottle" | "keyCache">): RequestHandler {
  return async (req, res, next) => {
    // req.ip honours TRUST_PROXY (create-app.ts); it is read only when the throttle needs it, not
    // for a cached key (its proxy-addr walk was ~0.6 % of the gateway's CPU per submission). An IPv6
    // client counts by its /64 (clientLimitKey), or one subscriber would have 2^64 buckets.
    const auth = await authenticateKey(deps.db, req.headers.authorization, { address: () => clientLimitKey(req.ip), by: deps.badKeyThrottle }, deps.keyCache);
    res.locals.userId = auth.userId;
    res.locals.apiKey = auth;
    next();
  };
}

export const authenticatedKey = (res: Response): AuthenticatedKey => res.locals.apiKey as AuthenticatedKey;
