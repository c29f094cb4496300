import path from "node:path";
import cookieParser from "cookie-parser";
import express, { Router } from "express";
import type { ConsoleDeps } from "./console-deps.ts";
import { consoleErrorPage, consoleNotFound } from "./console-errors.ts";
import { createConsoleUi } from "./console-ui.ts";
import { cookiesAreSecure } from "./cookies.ts";
import { csrfCheck, signInCsrf } from "./csrf.ts";
import { deliveryConsoleRoutes } from "./deliveries/index.ts";
import { formBody } from "./form-body.ts";
import { taskConsoleRoutes } from "./tasks/index.ts";
import { queueDashboard } from "./queue-dashboard.ts";
import { PreSignInSessions } from "./pre-sign-in-session.ts";
import { queueOriginCheck } from "./queue-origin-check.ts";
import { requireSession } from "./require-session.ts";
import { securityHeaders } from "./security-headers.ts";
import { consoleSessions } from "./session.ts";
import { SignInGuard } from "./sign-in-guard.ts";
import { signInRoutes, signOutRoute } from "./sign-in-routes.ts";

const ASSETS = path.join(import.meta.dirname, "assets");
const STATES = ["waiting", "active", "delayed", "failed", "completed"] as const;

export interface ConsoleRouterOptions {
  /** The console's public address (BASE_URL on the gateway, CONSOLE_BASE_URL on its own): same-origin checks and Secure cookies follow it. */
  baseUrl: string;
}

/**
 * The operations console, to be mounted at /console (links and cookies are scoped there). Order
 * matters: assets and sign-in are public; then the session check; bull-board (same-origin check
 * only, see queue-origin-check.ts); then the CSRF check for every other state-changing request.
 */
export function createConsoleRouter(deps: ConsoleDeps, { baseUrl }: ConsoleRouterOptions): Router {
  const { config } = deps;
  const ui = createConsoleUi();
  const secureCookies = cookiesAreSecure(baseUrl);
  const sessions = consoleSessions(deps.redis, config.queuePrefix, config.console, secureCookies);
  const queues = [deps.generationQueue, deps.webhookQueue, deps.maintenanceQueue];
  const router = Router();

  router.use(securityHeaders);
  router.use("/assets", express.static(ASSETS, { index: false, maxAge: "1h" }));
  router.use(formBody, cookieParser(), sessions.handler);
  const guard = new SignInGuard(deps.redis, config.queuePrefix);
  const preSignIn = new PreSignInSessions(deps.redis, config.queuePrefix, secureCookies);
  router.use(
    signInRoutes({
      config,
      baseUrl,
      guard,
      db: deps.db,
      logger: deps.logger,
      rateLimiter: deps.rateLimiter,
      csrf: signInCsrf(sessions.secret, secureCookies, (req) => preSignIn.current(req)),
      preSignIn,
      ui,
      secureCookies,
    }),
  );
  router.use(requireSession(deps.db, config.console));
  router.use("/queues", queueOriginCheck(baseUrl), queueDashboard(queues, "/console/queues"));
  router.use(csrfCheck(baseUrl));
  router.use(signOutRoute(secureCookies));
  router.get("/", async (_req, res) => {
    const counts = await Promise.all(queues.map(async (q) => ({ name: q.name, counts: await q.getJobCounts(...STATES) })));
    ui.page(res, { title: "Operations console", view: "home", data: { queues: counts, states: STATES } });
  });
  router.use("/deliveries", deliveryConsoleRoutes(deps, ui));
  router.use("/tasks", taskConsoleRoutes(deps, ui));
  router.use(consoleNotFound(ui));
  router.use(consoleErrorPage(ui));
  return router;
}
