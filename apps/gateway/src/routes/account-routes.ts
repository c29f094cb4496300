import { Router } from "express";
import { ApiError } from "@gen/errors";
import { context } from "@gen/http";
import { authenticate } from "../middleware/authenticate.ts";
import { rateLimit } from "../middleware/rate-limit.ts";
import type { GatewayDeps } from "../services/gateway-deps.ts";

export function accountRoutes(deps: GatewayDeps): Router {
  const router = Router();
  router.get("/api/v1/account", authenticate(deps), rateLimit(deps.rateLimiter, "poll", deps.config.pollRate), async (_req, res) => {
    const user = await deps.db.user.findUnique({ where: { id: context(res).userId! }, select: { credits: true } });
    if (!user) throw new ApiError(10003);
    res.json({ credits: user.credits });
  });
  return router;
}
