import type { Request, RequestHandler, Response } from "express";
import { context } from "@gen/http";
import { UNMATCHED_ROUTE, recordHttpRequest, type Metrics } from "@gen/metrics";

/**
 * Counts and times every response by the route pattern that answered it (`/api/v1/tasks/:id`),
 * never by its raw path: paths hold task ids, and one series per task would swamp Prometheus.
 */
export function httpMetrics(metrics: Metrics): RequestHandler {
  // One listener for every response (no closure per request): the response knows its request.
  function recordResponse(this: Response): void {
    // requestId (mounted first) took the start time; one clock read per request serves both.
    const seconds = Number(process.hrtime.bigint() - context(this).startedAt) / 1e9;
    recordHttpRequest(metrics, { method: this.req.method, route: routeOf(this.req), status: this.statusCode, seconds });
  }
  return (_req, res, next) => {
    res.on("finish", recordResponse);
    next();
  };
}

/**
 * `req.route` stays set when a matched route's handler or middleware (authentication, validation)
 * fails, so errors on known routes keep their pattern. A response from mounted middleware
 * (static files under /cdn, CORS preflight under /api) is labelled by its mount path, which is
 * literal in create-app.ts. Everything else, 404s included, is "unmatched".
 */
function routeOf(req: Request): string {
  const pattern: unknown = req.route?.path;
  if (typeof pattern === "string") return `${req.baseUrl}${pattern}`;
  if (req.baseUrl !== "") return `${req.baseUrl}/*`;
  return UNMATCHED_ROUTE;
}
