import { Router } from "express";
import { authenticate } from "../middleware/authenticate.ts";
import { rateLimit } from "../middleware/rate-limit.ts";
import type { GatewayDeps } from "../services/gateway-deps.ts";
import { modelListBody } from "../services/model-list.ts";

/** GET /api/v1/models: what a key can submit to, with each model's parameters and pricing. */
export function modelRoutes(deps: GatewayDeps): Router {
  const router = Router();
  const body = modelListBody(deps.catalog);
  router.get("/api/v1/models", authenticate(deps), rateLimit(deps, "poll", deps.config.pollRate), (_req, res) => {
    res.type("application/json").send(body);
  });
  return router;
}
