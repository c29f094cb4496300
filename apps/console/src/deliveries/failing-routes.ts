import { Router, type Request } from "express";
import { listDeadDeliveryTaskIds, listFailingDeliveries, type FailingDelivery } from "@gen/db";
import { LAST_ERROR_NAMES } from "@gen/domain";
import type { ConsoleDeps } from "../console-deps.ts";
import type { ConsoleLocals, ConsoleUi } from "../console-ui.ts";
import { BULK_REDELIVERY_MAX, BULK_REDELIVERY_PER_SECOND, BulkRedelivery, type BulkRun } from "./bulk-redelivery.ts";
import { filterQuery, readFailingFilter, type FilterFields } from "./failing-filter.ts";
import { maskWebhookUrl } from "./mask-webhook-url.ts";

const LISTED = 200;

/**
 * Failing webhooks, mounted at /failing under the delivery view: dead deliveries (`failed`, no
 * attempt follows) and retrying ones (a failed attempt, the next one due), filtered by customer,
 * receiver host, `last_error` and the last attempt's time; and a bulk redelivery of the dead ones
 * of a filter since a time, behind a confirmation page (the post is CSRF-checked like every form).
 */
export function failingDeliveryRoutes(deps: ConsoleDeps, ui: ConsoleUi): Router {
  const router = Router();
  const bulk = new BulkRedelivery(deps);
  const taskHref = (req: Request, taskId: string) => `${req.baseUrl}/${encodeURIComponent(taskId)}`;

  router.get("/failing", async (req, res) => {
    const read = readFailingFilter(req.query);
    const common = { selfHref: `${req.baseUrl}/failing`, lastErrors: LAST_ERROR_NAMES, bulk: bulkView(bulk.status()), flash: bulkFlash(req.query) };
    if (!read.ok)
      return ui.page(res, {
        title: "Failing webhooks",
        view: "deliveries/failing",
        status: 400,
        data: { ...common, fields: read.fields, error: read.error, rows: [] },
      });
    const rows = await listFailingDeliveries(deps.db, read.filter, LISTED);
    ui.page(res, {
      title: "Failing webhooks",
      view: "deliveries/failing",
      data: {
        ...common,
        fields: read.fields,
        error: null,
        listed: LISTED,
        rows: rows.map((row) => rowView(row, taskHref(req, row.taskId))),
        bulkHref: `${req.baseUrl}/failing/redeliver?${filterQuery(read.fields)}`,
      },
    });
  });

  router.get("/failing/redeliver", async (req, res) => {
    const read = readFailingFilter(req.query);
    const backHref = `${req.baseUrl}/failing?${filterQuery(read.fields)}`;
    const confirm = (status: number, data: object) =>
      ui.page(res, { title: "Redeliver failed webhooks", view: "deliveries/failing-confirm", status, data: { backHref, fields: read.fields, ...data } });
    if (!read.ok) return confirm(400, { error: read.error });
    if (read.filter.from === undefined)
      return confirm(400, { error: "Say since when (From): a bulk redelivery covers the dead deliveries whose last attempt ran since then." });
    const ids = await listDeadDeliveryTaskIds(deps.db, read.filter, BULK_REDELIVERY_MAX + 1);
    confirm(200, {
      error: null,
      count: Math.min(ids.length, BULK_REDELIVERY_MAX),
      capped: ids.length > BULK_REDELIVERY_MAX,
      max: BULK_REDELIVERY_MAX,
      perSecond: BULK_REDELIVERY_PER_SECOND,
      actionHref: `${req.baseUrl}/failing/redeliver`,
      running: bulkView(bulk.status())?.running ?? false,
    });
  });

  router.post("/failing/redeliver", async (req, res) => {
    const read = readFailingFilter((req.body ?? {}) as Record<string, unknown>);
    const back = (fields: FilterFields, outcome: string) =>
      res.redirect(303, `${req.baseUrl}/failing?${filterQuery(fields)}${filterQuery(fields) ? "&" : ""}bulk=${outcome}`);
    if (!read.ok || read.filter.from === undefined || req.body?.confirm !== "yes") return back(read.fields, "refused");
    const ids = await listDeadDeliveryTaskIds(deps.db, read.filter, BULK_REDELIVERY_MAX);
    if (ids.length === 0) return back(read.fields, "empty");
    const { operator } = res.locals as ConsoleLocals;
    const started = bulk.start(ids, operator.email, operator.id);
    back(read.fields, started.started ? "started" : "busy");
  });

  return router;
}

function rowView(row: FailingDelivery, href: string) {
  return {
    taskId: row.taskId,
    href,
    userId: row.userId,
    maskedUrl: maskWebhookUrl(row.url),
    state: row.status === "failed" ? "dead" : "retrying",
    status: row.status,
    attempts: row.attempts,
    lastError: row.lastError ?? "",
    lastAttemptAt: row.lastAttemptAt?.toISOString() ?? null,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
  };
}

function bulkView(run: BulkRun | undefined) {
  if (!run) return null;
  return { ...run, running: run.finishedAt === null, startedAt: run.startedAt.toISOString(), finishedAt: run.finishedAt?.toISOString() ?? null };
}

const FLASH: Record<string, { tone: "ok" | "error"; text: string }> = {
  started: { tone: "ok", text: `Bulk redelivery started: ${BULK_REDELIVERY_PER_SECOND} per second; its progress is below.` },
  busy: { tone: "error", text: "A bulk redelivery is already running in this console process; wait for it to finish." },
  empty: { tone: "error", text: "No dead delivery matches this filter any more: nothing was redelivered." },
  refused: { tone: "error", text: "Not redelivered: the confirmation needs a valid filter with From." },
};

function bulkFlash(query: Request["query"]) {
  return typeof query.bulk === "string" ? (FLASH[query.bulk] ?? null) : null;
}
