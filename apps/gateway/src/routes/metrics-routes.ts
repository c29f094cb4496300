import { createHash, timingSafeEqual } from "node:crypto";
import { Router } from "express";
import { ApiError, Err } from "@gen/errors";
import { renderMetrics } from "@gen/metrics";
import type { GatewayDeps } from "../services/gateway-deps.ts";

/**
 * GET /metrics on the API port, only when METRICS_TOKEN is set and only to that bearer token: the
 * figures (queue depths, traffic per route) are an operator's, not the internet's. Without a token
 * the metrics live on GATEWAY_METRICS_PORT alone and /metrics here is an unknown route.
 */
export function metricsRoutes(deps: GatewayDeps): Router {
  const router = Router();
  const token = deps.config.metricsToken;
  if (token === undefined) return router;
  const expected = digest(token);
  router.get("/metrics", async (req, res, next) => {
    const header = req.headers.authorization;
    if (header === undefined) return next(new ApiError(Err.MissingAuthorization));
    const match = /^Bearer (.+)$/.exec(header);
    if (match === null) return next(new ApiError(Err.NotBearer));
    // Digests of equal length, so the comparison takes the same time whatever was sent.
    if (!timingSafeEqual(digest(match[1]!), expected)) return next(new ApiError(Err.KeyInvalid));
    const { contentType, body } = await renderMetrics(deps.metrics);
    res.type(contentType).send(body);
  });
  return router;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}
