import { Router, type Request, type Response } from "express";
import { ApiError, Err } from "@gen/errors";
import { TASK_ID_PATTERN } from "@gen/ids";
import { listTasks } from "@gen/db";
import { renderTask } from "@gen/task-render";
import { createTaskReader, createTaskWithDeliveryReader, readTaskAnswer } from "../services/read-task.ts";
import { context } from "@gen/http";
import type { HotRoute } from "../http/hot-routes.ts";
import { authenticate } from "../middleware/authenticate.ts";
import { rateLimit } from "../middleware/rate-limit.ts";
import { cancelTask } from "../services/cancel-task.ts";
import type { GatewayDeps } from "../services/gateway-deps.ts";
import { encodeCursor, parseTaskListQuery } from "../services/task-list-query.ts";

const INCLUDES = new Set(["webhook", "billing"]);
// One object per combination, shared by every poll.
const INCLUDE = {
  none: { webhook: false, billing: false },
  webhook: { webhook: true, billing: false },
  billing: { webhook: false, billing: true },
  both: { webhook: true, billing: true },
};

/** GET /api/v1/tasks/{id}: 200 whenever the caller owns the task, whatever its state. */
export function pollRoute(deps: GatewayDeps): HotRoute {
  const polls = { finishedTasks: deps.finishedTasks, readTask: createTaskReader(deps.db), readTaskWithDelivery: createTaskWithDeliveryReader(deps.db) };
  return {
    method: "GET",
    path: "/api/v1/tasks/:id",
    handlers: [
      authenticate(deps),
      rateLimit(deps, "poll", deps.config.pollRate),
      async (req, res) => {
        // Most polls carry no query string: no parsing for them.
        const include = req.url.includes("?") ? parseInclude(req) : INCLUDE.none;
        const id = req.params.id as string;
        // Malformed ids and other users' tasks look exactly like unknown ones.
        if (!TASK_ID_PATTERN.test(id)) throw new ApiError(Err.TaskNotFound);
        const body = await readTaskAnswer(polls, id, context(res).userId!, include);
        if (body === null) throw new ApiError(Err.TaskNotFound);
        sendJson(req, res, body);
      },
    ],
  };
}

/**
 * GET /api/v1/tasks (the caller's own tasks, a page at a time), POST /api/v1/tasks/{id}/cancel,
 * and the poll route for targets the fast path leaves to Express.
 */
export function taskRoutes(deps: GatewayDeps, poll: HotRoute): Router {
  const router = Router();
  router.get(poll.path, ...poll.handlers);
  router.get("/api/v1/tasks", authenticate(deps), rateLimit(deps, "poll", deps.config.pollRate), async (req, res) => {
    const query = parseTaskListQuery(req.query, context(res).userId!);
    // One row more than the page: whether it exists decides next_cursor, so the last page says so.
    const rows = await listTasks(deps.db, { ...query, limit: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    const next = rows.length > query.limit && last !== undefined ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null;
    res.type("application/json").send(`{"data":[${page.map((task) => renderTask(task)).join(",")}],"next_cursor":${JSON.stringify(next)}}`);
  });
  router.post("/api/v1/tasks/:id/cancel", authenticate(deps), rateLimit(deps, "submit", deps.config.submitRate), async (req, res) => {
    const id = req.params.id as string;
    if (!TASK_ID_PATTERN.test(id)) throw new ApiError(Err.TaskNotFound);
    const task = await cancelTask(deps, context(res).userId!, id);
    res.type("application/json").send(renderTask(task));
  });
  return router;
}

/**
 * The 200 as `res.type("application/json").send(body)` writes it (same headers, same order)
 * without its per-call parsing. A conditional GET (`If-None-Match: *` is "fresh" to Express, a
 * 304) and HEAD keep Express's own send.
 */
function sendJson(req: Request, res: Response, body: string): void {
  if (req.method !== "GET" || req.headers["if-none-match"] !== undefined || req.headers["if-modified-since"] !== undefined) {
    res.type("application/json").send(body);
    return;
  }
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}

/** `include=webhook,billing` and repeated `include=` both work; unknown values are 20003. */
function parseInclude(req: Request): { webhook: boolean; billing: boolean } {
  const raw = req.query.include;
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const include = new Set<string>();
  for (const value of values) {
    if (typeof value !== "string") throw new ApiError(Err.ParameterInvalid, "Invalid value for include");
    for (const item of value.split(",")) {
      const name = item.trim();
      if (name === "") continue;
      if (!INCLUDES.has(name))
        throw new ApiError(Err.ParameterInvalid, `Invalid value for include: ${JSON.stringify(name.slice(0, 40))} (allowed: webhook, billing)`);
      include.add(name);
    }
  }
  const webhook = include.has("webhook");
  const billing = include.has("billing");
  return webhook ? (billing ? INCLUDE.both : INCLUDE.webhook) : billing ? INCLUDE.billing : INCLUDE.none;
}
