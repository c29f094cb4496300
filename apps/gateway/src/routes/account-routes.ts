import { Router } from "express";
import { readCredits } from "@gen/db";
import { ApiError, Err } from "@gen/errors";
import { context } from "@gen/http";
import { authenticate } from "../middleware/authenticate.ts";
import { rateLimit } from "../middleware/rate-limit.ts";
import type { GatewayDeps } from "../services/gateway-deps.ts";

export function accountRoutes(deps: GatewayDeps): Router {
  const router = Router();
  router.get("/api/v1/account", authenticate(deps), rateLimit(deps, "poll", deps.config.pollRate), async (_req, res) => {
    const credits = await readCredits(deps.db, context(res).userId!);
    if (credits === undefined) throw new ApiError(Err.KeyInvalid);
    res.json({ credits });
  });
  return router;
}
