import { Router } from "express";
import { pingDatabase } from "@gen/db";
import type { GatewayDeps } from "../services/gateway-deps.ts";

/** /healthz: the process answers. /readyz: PostgreSQL and Redis answer too (503 otherwise). */
export function healthRoutes(deps: GatewayDeps): Router {
  const router = Router();
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    const [database, redis] = await Promise.all([
      pingDatabase(deps.db).then(
        () => "ok",
        () => "unavailable",
      ),
      deps.redis.ping().then(
        () => "ok",
        () => "unavailable",
      ),
    ]);
    const ready = database === "ok" && redis === "ok";
    res.status(ready ? 200 : 503).json({ status: ready ? "ready" : "not_ready", database, redis });
  });
  return router;
}
