import { Router, type Request } from "express";
import { ApiError, Err } from "@gen/errors";
import { TASK_ID_PATTERN } from "@gen/ids";
import { renderTask } from "@gen/task-render";
import { createTaskReader, readTaskAnswer } from "../services/read-task.ts";
import { context } from "@gen/http";
import { authenticate } from "../middleware/authenticate.ts";
import { rateLimit } from "../middleware/rate-limit.ts";
import { cancelTask } from "../services/cancel-task.ts";
import type { GatewayDeps } from "../services/gateway-deps.ts";

const INCLUDES = new Set(["webhook", "billing"]);

/** GET /api/v1/tasks/{id}: 200 whenever the caller owns the task, whatever its state. */
export function taskRoutes(deps: GatewayDeps): Router {
  const router = Router();
  const polls = { db: deps.db, finishedTasks: deps.finishedTasks, readTask: createTaskReader(deps.db) };
  router.get("/api/v1/tasks/:id", authenticate(deps), rateLimit(deps, "poll", deps.config.pollRate), async (req, res) => {
    const include = parseInclude(req);
    const id = req.params.id as string;
    // Malformed ids and other users' tasks look exactly like unknown ones.
    if (!TASK_ID_PATTERN.test(id)) throw new ApiError(Err.TaskNotFound);
    const body = await readTaskAnswer(polls, id, context(res).userId!, { webhook: include.has("webhook"), billing: include.has("billing") });
    if (body === null) throw new ApiError(Err.TaskNotFound);
    res.type("application/json").send(body);
  });
  router.post("/api/v1/tasks/:id/cancel", authenticate(deps), rateLimit(deps, "submit", deps.config.submitRate), async (req, res) => {
    const id = req.params.id as string;
    if (!TASK_ID_PATTERN.test(id)) throw new ApiError(Err.TaskNotFound);
    const task = await cancelTask(deps, context(res).userId!, id);
    res.type("application/json").send(renderTask(task));
  });
  return router;
}

/** `include=webhook,billing` and repeated `include=` both work; unknown values are 20003. */
function parseInclude(req: Request): Set<string> {
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
  return include;
}
