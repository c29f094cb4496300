import { Router, type Request, type Response } from "express";
import { DeliveryStatus } from "@gen/domain";
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
import { createTestWebhooks, outcomeMeaning, type TestWebhookResult } from "./test-webhook.ts";

/**
 * The console's delivery view, mounted at /console/deliveries behind the console's session and
 * CSRF checks: find a task, see its webhook object and every attempt, redeliver by hand, send a
 * test webhook, a chart of the last hour, and the failing webhooks with their bulk redelivery
 * (failing-routes.ts). Links are built from `req.baseUrl`, so the mount point is the caller's.
 */
export function deliveryConsoleRoutes(deps: ConsoleDeps, ui: ConsoleUi): Router {
  const router = Router();
  const testWebhooks = createTestWebhooks(deps.webhookSender);

  async function indexPage(req: Request, res: Response, testWebhook: TestWebhookView | null = null, status = 200): Promise<void> {
    const baseHref = req.baseUrl;
    const [stats, recent] = await Promise.all([loadDeliveryStats(deps.db, new Date()), loadRecentAttempts(deps.db)]);
    const data = {
      baseHref,
      testWebhook,
      chart: statsChart(stats, `${baseHref}/stats.json`),
      recent: attemptsTable(
        "recent-attempts",
        `The ${recent.length} most recently finished attempts`,
        recent,
        (taskId) => `${baseHref}/${encodeURIComponent(taskId)}`,
      ),
    };
    ui.page(res, { title: "Webhook deliveries", view: "deliveries/index", data, status });
  }

  router.get("/", async (req, res) => {
    const wanted = typeof req.query.task_id === "string" ? req.query.task_id.trim() : "";
    if (wanted !== "") {
      res.redirect(302, `${req.baseUrl}/${encodeURIComponent(wanted)}`);
      return;
    }
    await indexPage(req, res);
  });

  // Answered with the page itself, not a redirect: the result is the operator's own input and the
  // receiver's answer, which a link must not be able to put on the page.
  router.post("/test-webhook", async (req, res) => {
    const url: unknown = (req.body as Record<string, unknown> | undefined)?.url;
    const result = await testWebhooks.send(url);
    if (result.kind === "sent") {
      // Never the URL: callers put secrets in it.
      deps.logger.info("console test webhook sent", {
        operator_id: (res.locals as ConsoleLocals).operator.id,
        outcome: result.outcome,
        response_status: result.status,
        duration_ms: result.durationMs,
      });
    }
    const status = result.kind === "refused" ? 400 : result.kind === "busy" ? 429 : 200;
    await indexPage(req, res, testWebhookView(result, url), status);
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

/** What views/deliveries/index.eta shows under the test webhook form. */
interface TestWebhookView {
  /** The URL as typed, to send again (only when short enough to be a webhook_url at all). */
  url: string;
  tone: "ok" | "error";
  outcome: string;
  text: string;
}

function testWebhookView(result: TestWebhookResult, url: unknown): TestWebhookView {
  const typed = typeof url === "string" && url.length <= 2048 ? url : "";
  switch (result.kind) {
    case "refused":
      return { url: typed, tone: "error", outcome: "refused", text: `Not sent: ${result.reason}.` };
    case "busy":
      return { url: typed, tone: "error", outcome: "busy", text: "Not sent: other test webhooks are being sent from this process; try again in a moment." };
    case "sent": {
      const answer = result.status === null ? "" : `HTTP ${result.status}, `;
      const delivered = result.outcome === DeliveryStatus.Delivered;
      const head = delivered ? "Delivered" : `Not delivered: ${result.outcome}`;
      return {
        url: typed,
        tone: delivered ? "ok" : "error",
        outcome: result.outcome,
        text: `${head} (${answer}${result.durationMs} ms): ${outcomeMeaning(result.outcome)}.`,
      };
    }
  }
}

/** Unknown and malformed ids alike: the id as typed (escaped by the template, cut short) and the search again. */
function notFound(ui: ConsoleUi, res: Response, baseHref: string, taskId: string): void {
  const shown = taskId.length > 80 ? `${taskId.slice(0, 80)}…` : taskId;
  ui.page(res, { title: "Task not found", view: "deliveries/not-found", status: 404, data: { baseHref, shown } });
}
