import express from "express";
import { ApiError, Err } from "@gen/errors";
import { context, errorHandler, requestId, requestLog } from "@gen/http";
import { traceRequests } from "@gen/tracing";
import type { ConsoleDeps } from "./console-deps.ts";
import { createConsoleRouter } from "./console-router.ts";

/**
 * The console on a listener of its own (`pnpm start:console`): the same router the gateway mounts,
 * at the same path, with the gateway's request ids, request log and JSON error envelope around it.
 */
export function createConsoleApp(deps: ConsoleDeps): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  // req.ip (the sign-in limits) is the client behind a trusted proxy only.
  app.set("trust proxy", deps.config.trustProxy);
  app.use(requestId, ...traceRequests({ requestId: (res: express.Response) => context(res).requestId }), requestLog(deps.logger));
  app.get("/", (_req, res) => res.redirect(302, "/console"));
  app.use("/console", createConsoleRouter(deps, { baseUrl: deps.config.console.baseUrl }));
  app.use((_req, _res, next) => next(new ApiError(Err.RouteNotFound)));
  app.use(errorHandler(deps.logger));
  return app;
}
