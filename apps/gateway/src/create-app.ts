import path from "node:path";
import express from "express";
import { createConsoleRouter } from "@gen/console";
import { ApiError, Err } from "@gen/errors";
import { errorHandler, requestId, requestLog } from "@gen/http";
import { routerFor, serveHotRoutes } from "./http/hot-routes.ts";
import { answerUnparseableTargets, lastResort } from "./http/unparseable-target.ts";
import { httpMetrics } from "./middleware/http-metrics.ts";
import { noSniff } from "./middleware/no-sniff.ts";
import { originGuard } from "./middleware/origin-guard.ts";
import { accountRoutes } from "./routes/account-routes.ts";
import { healthRoutes } from "./routes/health-routes.ts";
import { metricsRoutes } from "./routes/metrics-routes.ts";
import { modelRoutes } from "./routes/model-routes.ts";
import { openApiRoutes } from "./routes/openapi-routes.ts";
import { submissionRoutes } from "./routes/submission-routes.ts";
import { pollRoute, taskRoutes } from "./routes/task-routes.ts";
import { upstreamCallbackRoutes } from "./routes/upstream-callback-routes.ts";
import type { GatewayDeps } from "./services/gateway-deps.ts";

export function createApp(deps: GatewayDeps): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  // Plain key=value parsing: `include=a&include=b` becomes an array, and nothing builds objects.
  app.set("query parser", "simple");
  // req.ip (rate limits keyed on the client address) is the client behind a trusted proxy only.
  app.set("trust proxy", deps.config.trustProxy);
  const everyRequest = [requestId, requestLog(deps.logger), httpMetrics(deps.metrics)];
  app.use(...everyRequest);
  // The API first, polls (the most frequent request) before submissions: every router a request
  // passes costs it CPU. No two of the routers below share
  // a path, so the order changes no answer; the OpenAPI document, under /api, stays unguarded.
  app.use(openApiRoutes(deps));
  // The /docs page ("try it out") calls the API from the gateway's own origin: always allowed.
  const guard = originGuard([...deps.config.allowedOrigins, new URL(deps.config.baseUrl).origin]);
  app.use("/api", guard);
  const poll = pollRoute(deps);
  const submissions = submissionRoutes(deps);
  app.use(taskRoutes(deps, poll));
  app.use(routerFor(submissions));
  app.use(accountRoutes(deps));
  app.use(modelRoutes(deps));
  app.use(healthRoutes(deps));
  app.use(metricsRoutes(deps));
  // Providers' webhooks (UPSTREAM_CALLBACK_URL): outside /api, no API key, the token is the credential.
  app.use(upstreamCallbackRoutes(deps));
  // Stored media may hold upstream-chosen bytes: a browser must never sniff them into HTML/script.
  // Only media (`tasks/<id>/...`) are served: the task archive (`archive/`, TASK_ARCHIVE) lives in
  // the same directory and holds every user's inputs, so it must never be reachable from here.
  app.use("/cdn/tasks", noSniff, express.static(path.join(deps.config.storage.dir, "tasks"), { fallthrough: true, index: false, dotfiles: "deny" }));
  // Off with CONSOLE_ON_GATEWAY=false, when `pnpm start:console` serves it on a private listener.
  if (deps.config.console.onGateway) app.use("/console", createConsoleRouter(deps, { baseUrl: deps.config.baseUrl }));
  app.use((_req, _res, next) => next(new ApiError(Err.RouteNotFound)));
  const errors = errorHandler(deps.logger);
  app.use(errors);
  answerUnparseableTargets(app, deps.logger);
  // The API's two hot paths skip the router (hot-routes.ts): the layers above they pass on it.
  serveHotRoutes(app, [...everyRequest, guard], [poll, ...submissions], errors, (req, res, error) => lastResort(req, res, error, deps.logger));
  return app;
}
