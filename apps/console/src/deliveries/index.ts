import { Router, type Response } from "express";
import { TASK_ID_PATTERN } from "@gen/ids";
import { requestRedelivery } from "@gen/webhook-delivery";
import type { ConsoleDeps } from "../console-deps.ts";
import type { ConsoleLocals, ConsoleUi } from "../console-ui.ts";
import { attemptsTable } from "./attempts-table.ts";
import { deliveryPage } from "./delivery-page.ts";
import { failingDeliveryRoutes } from "./failing-routes.ts";
import { loadDeliveryStats } from "./delivery-stats.ts";
import { loadDeliveryView, loadRecentAttempts } from "./load-delivery-view.ts";
import { flashFromQuery, flashQuery } from "./redelivery-flash.ts";
import { statsChart } from "./stats-chart.ts";

/**
 * The console's delivery view, mounted at /console/deliveries behind the console's session and
 * CSRF checks: find a task, see its webhook object and every attempt, redeliver by hand, a chart
 * of the last hour, and the failing webhooks with their bulk redelivery (failing-routes.ts). Links are built from `req.baseUrl`, so the mount point is the caller's.
 */
export function deliveryConsoleRoutes(deps: ConsoleDeps, ui: ConsoleUi): Router {
  const router = Router();

  router.get("/", async (req, res) => {
    const wanted = typeof req.query.task_id === "string" ? req.query.task_id.trim() : "";
    if (wanted !== "") {
      res.redirect(302, `${req.baseUrl}/${encodeURIComponent(wanted)}`);
      return;
    }
    const baseHref = req.baseUrl;
    const [stats, recent] = await Promise.all([loadDeliveryStats(deps.db, new Date()), loadRecentAttempts(deps.db)]);
    const data = {
      baseHref,
      chart: statsChart(stats, `${baseHref}/stats.json`),
      recent: attemptsTable(
        "recent-attempts",
        `The ${recent.length} most recently finished attempts`,
        recent,
        (taskId) => `${baseHref}/${encodeURIComponent(taskId)}`,
      ),
    };
    ui.page(res, { title: "Webhook deliveries", view: "deliveries/index", data });
  });

  router.get("/stats.json", async (_req, res) => {
    res.set("Cache-Control", "no-store").json(await loadDeliveryStats(deps.db, new Date()));
  });

  // Before /:taskId, which would take "failing" for a task id.
  router.use(failingDeliveryRoutes(deps, ui));

  router.get("/:taskId", async (req, res) => {
    const taskId = req.params.taskId;
    const view = TASK_ID_PATTERN.test(taskId) ? await loadDeliveryView(deps.db, taskId) : null;
    if (!view) return notFound(ui, res, req.baseUrl, taskId);
    const hrefs = { self: `${req.baseUrl}/${taskId}`, index: req.baseUrl, tasks: `${req.baseUrl.replace(/\/deliveries$/, "")}/tasks` };
    const data = deliveryPage(view, flashFromQuery(req.query, deps.config.reconcileIntervalMs), hrefs);
    ui.page(res, { title: `Task ${taskId}`, view: "deliveries/delivery", data });
  });

  router.post("/:taskId/redeliver", async (req, res) => {
    const taskId = req.params.taskId;
    if (!TASK_ID_PATTERN.test(taskId)) return notFound(ui, res, req.baseUrl, taskId);
    // The attempt log names the operator as people know them.
    const operator = (res.locals as ConsoleLocals).operator.email;
    const result = await requestRedelivery(deps, taskId, operator);
    if (!result.ok && result.reason === "unknown_task") return notFound(ui, res, req.baseUrl, taskId);
    if (result.ok) {
      deps.logger.info("webhook redelivery requested", {
        task_id: taskId,
        attempt: result.attempt,
        operator_id: (res.locals as ConsoleLocals).operator.id,
        enqueued: result.enqueued,
      });
      if (!result.enqueued)
        deps.logger.warn("could not enqueue a manual webhook attempt; the reconciler will", {
          task_id: taskId,
          attempt: result.attempt,
          err: result.enqueueError,
        });
    }
    res.redirect(303, `${req.baseUrl}/${taskId}?${flashQuery(result)}`);
  });

  return router;
}

/** Unknown and malformed ids alike: the id as typed (escaped by the template, cut short) and the search again. */
function notFound(ui: ConsoleUi, res: Response, baseHref: string, taskId: string): void {
  const shown = taskId.length > 80 ? `${taskId.slice(0, 80)}…` : taskId;
  ui.page(res, { title: "Task not found", view: "deliveries/not-found", status: 404, data: { baseHref, shown } });
}
