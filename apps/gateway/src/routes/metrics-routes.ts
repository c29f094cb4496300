import { Router } from "express";
import { renderMetrics } from "@gen/metrics";
import type { GatewayDeps } from "../services/gateway-deps.ts";

/** GET /metrics: Prometheus text format. Not under /api and unauthenticated: keep it off the public listener. */
export function metricsRoutes(deps: GatewayDeps): Router {
  const router = Router();
  router.get("/metrics", async (_req, res) => {
    const { contentType, body } = await renderMetrics(deps.metrics);
    res.type(contentType).send(body);
  });
  return router;
}
