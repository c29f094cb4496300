import type { RequestHandler } from "express";
import { authenticateKey } from "../services/authenticate-key.ts";
import type { GatewayDeps } from "../services/gateway-deps.ts";

export function authenticate(deps: Pick<GatewayDeps, "db" | "badKeyThrottle">): RequestHandler {
  return async (req, res, next) => {
    // req.ip honours TRUST_PROXY (create-app.ts).
    const { userId } = await authenticateKey(deps.db, req.headers.authorization, { address: req.ip ?? "unknown", by: deps.badKeyThrottle });
    res.locals.userId = userId;
    next();
  };
}
