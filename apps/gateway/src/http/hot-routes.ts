import { ApiError, Err } from "@gen/errors";
import { Router, type ErrorRequestHandler, type Express, type NextFunction, type Request, type RequestHandler, type Response } from "express";

/** A route also registered on the Express router, with the same handlers. */
export interface HotRoute {
  method: "GET" | "POST";
  /** Express path: literal segments and `:name` parameters. */
  path: string;
  handlers: RequestHandler[];
}

type Handle = (req: Request, res: Response, done?: NextFunction) => void;
type Final = (req: Request, res: Response, error?: unknown) => void;

// The characters a parameter may hold on the fast path: no `%` (so Express's percent-decoding
// would change nothing), no `/`, `.` or anything else its matching treats specially.
const PARAM = "([A-Za-z0-9_-]+)";

interface Compiled {
  pattern: RegExp;
  names: string[];
  route: { path: string };
  handlers: RequestHandler[];
}

/**
 * Polls and submissions are most of the traffic, and Express's router spent about a fifth of a
 * poll's CPU finding them: every app-level layer and mounted router is a path match, a prefix
 * trim and a restore. A request whose target is exactly one of
 * `routes` (the method, the literal path as written, plain parameter characters, any query) runs
 * `common` (what every API request passes through on the router: request id, log, metrics, the
 * origin guard) and the route's handlers directly, errors going to `errorHandler` as on the
 * router. Everything else, including a target Express would also match to the route (other case,
 * a trailing slash, percent-encoding, HEAD), takes the router: same handlers, same answers.
 */
export function serveHotRoutes(app: Express, common: RequestHandler[], routes: HotRoute[], errorHandler: ErrorRequestHandler, final: Final): void {
  const byMethod = new Map<string, Compiled[]>();
  for (const route of routes) {
    const names: string[] = [];
    const source = route.path.replace(/:(\w+)|[^:]+/g, (part, name?: string) => {
      if (name === undefined) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      names.push(name);
      return PARAM;
    });
    const compiled = { pattern: new RegExp(`^${source}$`), names, route: { path: route.path }, handlers: [...common, ...route.handlers] };
    byMethod.set(route.method, [...(byMethod.get(route.method) ?? []), compiled]);
  }
  // `handle` is how the app dispatches (answerUnparseableTargets wraps it the same way).
  const dispatch = app as unknown as { handle: Handle; request: object; response: object };
  const handle = dispatch.handle.bind(app);
  dispatch.handle = (req, res, done) => {
    const candidates = byMethod.get(req.method);
    if (candidates !== undefined && req.url.charCodeAt(0) === 0x2f) {
      const query = req.url.indexOf("?");
      const path = query === -1 ? req.url : req.url.slice(0, query);
      for (const route of candidates) {
        const match = route.pattern.exec(path);
        if (match !== null) return run(route, match, req, res, done);
      }
    }
    handle(req, res, done);
  };

  function run(route: Compiled, match: RegExpExecArray, req: Request, res: Response, done: NextFunction | undefined): void {
    // What app.handle and the router set up before the first layer runs. Every property the
    // request and response gain on this path is added BEFORE their prototypes are swapped: V8
    // adds a property to an object whose prototype was just changed through a new hidden class
    // each time (a fresh map per request, ~10-25 us and garbage, against ~2 us for the same
    // stores before the swap, measured in the poll benchmark). `body` (json-body.ts) is declared here
    // as body-parser declares it (`req.body = undefined` when absent) so its later store only
    // changes a value.
    req.res = res;
    res.req = req;
    if (!res.locals) res.locals = Object.create(null) as Record<string, unknown>;
    req.baseUrl = "";
    req.originalUrl = req.url;
    const params: Record<string, string> = {};
    for (let i = 0; i < route.names.length; i++) params[route.names[i]!] = match[i + 1]!;
    req.params = params;
    // http-metrics.ts labels the response with the matched route's pattern.
    (req as { route?: unknown }).route = route.route;
    req.body = undefined;
    // Node keeps these two on ServerResponse.prototype until a response sets them (202, writeHead).
    res.statusCode = 200;
    res.statusMessage = undefined as unknown as string;
    Object.setPrototypeOf(req, dispatch.request);
    Object.setPrototypeOf(res, dispatch.response);
    const handlers = route.handlers;
    let index = 0;
    // As the router's `next`: a handler calls it once, with an error or without. Past the last
    // handler the router would find no other layer for this target but the 404. The only closure
    // made per request (the error path makes its own).
    const next: NextFunction = (error?: unknown) => {
      if (error !== undefined && error !== null) return fail(error, req, res, done);
      const handler = handlers[index++];
      if (handler === undefined) return fail(new ApiError(Err.RouteNotFound), req, res, done);
      try {
        const returned: unknown = handler(req, res, next);
        if (returned instanceof Promise) returned.then(undefined, (rejected: unknown) => next(rejected ?? new Error("Rejected promise")));
      } catch (thrown) {
        next(thrown);
      }
    };
    next();
  }

  function fail(error: unknown, req: Request, res: Response, done: NextFunction | undefined): void {
    const finish = (failure?: unknown) => (done ? done(failure) : final(req, res, failure));
    try {
      errorHandler(error, req, res, finish);
    } catch (thrown) {
      finish(thrown);
    }
  }
}

/** The same routes on a router, for every target the fast path leaves to Express. */
export function routerFor(routes: HotRoute[]): Router {
  const router = Router();
  for (const route of routes) {
    if (route.method === "GET") router.get(route.path, ...route.handlers);
    else router.post(route.path, ...route.handlers);
  }
  return router;
}
