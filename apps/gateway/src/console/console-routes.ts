import path from "node:path";
import express, { Router } from "express";
import type { GatewayDeps } from "../services/gateway-deps.ts";
import { consoleErrorPage, consoleNotFound } from "./console-errors.ts";
import { createConsoleUi } from "./console-ui.ts";
import { cookiesAreSecure } from "./cookies.ts";
import { csrfCheck } from "./csrf-check.ts";
import { formBody } from "./form-body.ts";
import { deliveryConsoleRoutes } from "./deliveries/index.ts";
import { homePage } from "./home-page.ts";
import { queueDashboard } from "./queue-dashboard.ts";
import { queueOriginCheck } from "./queue-origin-check.ts";
import { requireSession } from "./require-session.ts";
import { securityHeaders } from "./security-headers.ts";
import { SessionStore } from "./session-store.ts";
import { SignInGuard } from "./sign-in-guard.ts";
import { signInRoutes, signOutRoute } from "./sign-in-routes.ts";

const ASSETS = path.join(import.meta.dirname, "assets");

/**
 * The operations console, mounted at /console. Order matters: assets and sign-in are public; then
 * the session check; bull-board (same-origin check only, see queue-origin-check.ts); then the CSRF
 * check for every other state-changing request.
 */
export function consoleRoutes(deps: GatewayDeps): Router {
  const { config } = deps;
  const ui = createConsoleUi();
  const secureCookies = cookiesAreSecure(config.baseUrl);
  const sessions = new SessionStore(deps.redis, config.queuePrefix, config.console);
  const queues = [deps.generationQueue, deps.webhookQueue, deps.webhookSlowQueue, deps.maintenanceQueue];
  const router = Router();

  router.use(securityHeaders);
  router.use("/assets", express.static(ASSETS, { index: false, maxAge: "1h" }));
  router.use(formBody);
  router.use(signInRoutes({ config, guard: new SignInGuard(deps.redis, config.queuePrefix), db: deps.db, logger: deps.logger, rateLimiter: deps.rateLimiter, sessions, ui, secureCookies }));
  router.use(requireSession(sessions, deps.db));
  router.use("/queues", queueOriginCheck(config.baseUrl), queueDashboard(queues, "/console/queues"));
  router.use(csrfCheck(config.baseUrl));
  router.use(signOutRoute(sessions, secureCookies));
  router.get("/", async (_req, res) => {
    const counts = await Promise.all(queues.map(async (q) => ({ name: q.name, counts: await q.getJobCounts("waiting", "active", "delayed", "failed", "completed") })));
    ui.page(res, { title: "Operations console", body: homePage(counts) });
  });
  router.use("/deliveries", deliveryConsoleRoutes(deps, ui));
  router.use(consoleNotFound(ui));
  router.use(consoleErrorPage(ui));
  return router;
}
