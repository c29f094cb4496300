import { Router } from "express";
import type { ConsoleDeps } from "../console-deps.ts";
import type { ConsoleUi } from "../console-ui.ts";
import { findTasks, readTaskQuery, LISTED_TASKS } from "./find-tasks.ts";

/**
 * The console's task search, mounted at /console/tasks beside /console/deliveries: by task id, by
 * the request id a client quotes, or by user. One task found goes straight to its page, the
 * delivery view's task page.
 */
export function taskConsoleRoutes(deps: ConsoleDeps, ui: ConsoleUi): Router {
  const router = Router();
  router.get("/", async (req, res) => {
    const taskHref = (taskId: string) => `${req.baseUrl.replace(/\/tasks$/, "")}/deliveries/${encodeURIComponent(taskId)}`;
    const raw = typeof req.query.q === "string" ? req.query.q : "";
    const shown = raw.length > 80 ? `${raw.slice(0, 80)}…` : raw;
    const page = (status: number, data: object) => ui.page(res, { title: "Find a task", view: "tasks/index", status, data: { q: shown, ...data } });
    if (raw.trim() === "") return page(200, { searched: false });
    const query = readTaskQuery(raw);
    if (!query) return page(400, { searched: true, invalid: true, tasks: [] });
    const tasks = await findTasks(deps.db, query);
    // A task id, or a request that made one task: its page. A user's list stays a list, even of one.
    if (tasks.length === 1 && query.kind !== "user") {
      res.redirect(302, taskHref(tasks[0]!.id));
      return;
    }
    page(tasks.length === 0 ? 404 : 200, {
      searched: true,
      kind: query.kind,
      limit: LISTED_TASKS,
      tasks: tasks.map((task) => ({
        id: task.id,
        href: taskHref(task.id),
        status: task.status,
        model: task.model,
        endpoint: task.endpoint,
        userId: task.userId,
        requestId: task.requestId,
        createdAt: task.createdAt.toISOString(),
        errorCode: task.errorCode,
        discarded: task.discardedAt !== null,
      })),
    });
  });
  return router;
}
