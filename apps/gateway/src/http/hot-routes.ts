import type { Express, RequestHandler } from "express";

/** A poll or submission route: registered on the app itself, ahead of every other layer. */
export interface HotRoute {
  method: "GET" | "POST";
  /** Express path: literal segments and `:name` parameters. */
  path: string;
  handlers: RequestHandler[];
}

/**
 * Polls and submissions are most of the traffic, and every layer the router tries before a route
 * is a path match, and every mounted router a prefix trim and a restore besides. Registered on the
 * app before anything else, with what every API request passes through (`common`: request id,
 * log, metrics, the origin guard) in front of the route's own handlers, they are the router's
 * first layers: a poll matches the first one it tries and a submission one of the next seven, with
 * no nested router in between. Everything after them is registered with `app.use` and never sees
 * a request these routes answered; an error they raise goes on to the app's error handler like any
 * other.
 */
export function registerHotRoutes(app: Express, common: RequestHandler[], routes: HotRoute[]): void {
  for (const route of routes) {
    if (route.method === "GET") app.get(route.path, ...common, ...route.handlers);
    else app.post(route.path, ...common, ...route.handlers);
  }
}
