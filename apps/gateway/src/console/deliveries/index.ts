import { Router, type Response } from "express";
import { TASK_ID_PATTERN } from "@gen/ids";
import { requestRedelivery } from "@gen/webhook-redelivery";
import type { GatewayDeps } from "../../services/gateway-deps.ts";
import type { ConsoleLocals, ConsoleUi } from "../console-ui.ts";
import { deliveryPage } from "./delivery-page.ts";
import { loadDeliveryStats } from "./delivery-stats.ts";
import { notFoundPage } from "./find-task-form.ts";
import { indexPage } from "./index-page.ts";
import { loadDeliveryView, loadRecentAttempts } from "./load-delivery-view.ts";
import { flashFromQuery, flashQuery } from "./redelivery-flash.ts";

/**
 * The console's delivery view, mounted at /console/deliveries behind the console's session and
 * CSRF checks: find a task, see its webhook object and every attempt, redeliver by hand, and a
 * chart of the last hour. Links are built from `req.baseUrl`, so the mount point is the caller's.
 */
export function deliveryConsoleRoutes(deps: GatewayDeps, ui: ConsoleUi): Router {
  const router = Router();

  router.get("/", async (req, res) => {
    const wanted = typeof req.query.task_id === "string" ? req.query.task_id.trim() : "";
    if (wanted !== "") {
      res.redirect(302, `${req.baseUrl}/${encodeURIComponent(wanted)}`);
      return;
    }
    const [stats, recent] = await Promise.all([loadDeliveryStats(deps.db, new Date()), loadRecentAttempts(deps.db)]);
    ui.page(res, { title: "Webhook deliveries", body: indexPage({ baseHref: req.baseUrl, stats, recent }) });
  });

  router.get("/stats.json", async (_req, res) => {
    res.set("Cache-Control", "no-store").json(await loadDeliveryStats(deps.db, new Date()));
  });

  router.get("/:taskId", async (req, res) => {
    const taskId = req.params.taskId;
    const view = TASK_ID_PATTERN.test(taskId) ? await loadDeliveryView(deps.db, taskId) : null;
    if (!view) return notFound(ui, res, req.baseUrl, taskId);
    const body = deliveryPage({
      view,
      flash: flashFromQuery(req.query, deps.config.reconcileIntervalMs),
      selfHref: `${req.baseUrl}/${taskId}`,
      indexHref: req.baseUrl,
      csrfField: ui.csrfField(res),
    });
    ui.page(res, { title: `Task ${taskId}`, body });
  });

  router.post("/:taskId/redeliver", async (req, res) => {
    const taskId = req.params.taskId;
    if (!TASK_ID_PATTERN.test(taskId)) return notFound(ui, res, req.baseUrl, taskId);
    // The attempt log names the operator as people know them.
    const operator = (res.locals as ConsoleLocals).operator.email;
    const result = await requestRedelivery(deps, taskId, operator);
    if (!result.ok && result.reason === "unknown_task") return notFound(ui, res, req.baseUrl, taskId);
    if (result.ok) {
      deps.logger.info("webhook redelivery requested", { task_id: taskId, attempt: result.attempt, operator_id: (res.locals as ConsoleLocals).operator.id, enqueued: result.enqueued });
      if (!result.enqueued) deps.logger.warn("could not enqueue a manual webhook attempt; the reconciler will", { task_id: taskId, attempt: result.attempt, err: result.enqueueError });
    }
    res.redirect(303, `${req.baseUrl}/${taskId}?${flashQuery(result)}`);
  });

  return router;
}

function notFound(ui: ConsoleUi, res: Response, baseHref: string, taskId: string): void {
  ui.page(res, { title: "Task not found", body: notFoundPage(baseHref, taskId), status: 404 });
}
