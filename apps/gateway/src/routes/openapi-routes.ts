import { createRequire } from "node:module";
import { dirname } from "node:path";
import express, { Router, type RequestHandler } from "express";
import { buildOpenApi } from "@gen/openapi";
import type { GatewayDeps } from "../services/gateway-deps.ts";
import { DOCS_ASSETS_PATH, DOCS_CONTENT_SECURITY_POLICY, DOCS_INIT_SCRIPT, DOCS_PAGE } from "./docs-page.ts";

const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

/**
 * GET /api/v1/openapi.json (built once, at start-up, from the catalog the gateway validates with)
 * and the /docs page that renders it. Public: no API key, and mounted before the origin guard.
 */
export function openApiRoutes(deps: GatewayDeps): Router {
  const document = JSON.stringify(buildOpenApi(deps.catalog, { baseUrl: deps.config.baseUrl, cdnUrl: deps.config.cdnUrl }));
  const router = Router();
  router.get("/api/v1/openapi.json", (_req, res) => {
    res.type("application/json").send(document);
  });
  router.use("/docs", docsHeaders);
  router.get("/docs", (_req, res) => {
    res.type("html").send(DOCS_PAGE);
  });
  router.get("/docs/init.js", (_req, res) => {
    res.type("text/javascript").send(DOCS_INIT_SCRIPT);
  });
  router.use(DOCS_ASSETS_PATH, express.static(SWAGGER_UI_DIR, { index: false, fallthrough: true, dotfiles: "deny" }));
  return router;
}

/** Set before the handler runs, so every answer under /docs carries them, 404s included. */
const docsHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader("Content-Security-Policy", DOCS_CONTENT_SECURITY_POLICY);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Referrer-Policy", "same-origin");
  next();
};
