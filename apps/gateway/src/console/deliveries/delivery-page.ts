import { taskObject } from "@gen/task-render";
import { escapeHtml } from "../console-ui.ts";
import { attemptsTable } from "./attempts-table.ts";
import type { DeliveryView } from "./load-delivery-view.ts";
import { maskWebhookUrl } from "./mask-webhook-url.ts";
import type { Flash } from "./redelivery-flash.ts";

const FINISHED = new Set(["delivered", "failed"]);
const iso = (date: Date | null) => (date === null ? "—" : `<time datetime="${date.toISOString()}">${date.toISOString()}</time>`);

export interface DeliveryPageOptions {
  view: DeliveryView;
  flash: Flash | null;
  /** This page's own address (the form posts to it + /redeliver). */
  selfHref: string;
  indexHref: string;
  csrfField: string;
}

/** One task's delivery: summary, the API's webhook object, every attempt, and the redeliver form. */
export function deliveryPage({ view, flash, selfHref, indexHref, csrfField }: DeliveryPageOptions): string {
  const { task, delivery } = view;
  const summary = [
    ["Id", `<code data-testid="task-id">${escapeHtml(task.id)}</code>`],
    ["Status", `<span id="task-status">${escapeHtml(task.status)}</span>${task.discardedAt ? " (discarded: rolled back at submission, never ran)" : ""}`],
    ["Model", escapeHtml(task.model)],
    ["Endpoint", escapeHtml(task.endpoint)],
    ["User", `<code>${escapeHtml(task.userId)}</code>`],
    ["Created", iso(task.createdAt)],
    ["Finished", iso(task.finishedAt)],
    ...(task.errorCode === null ? [] : [["Error", `${task.errorCode} ${escapeHtml(task.errorMessage ?? "")}`]]),
  ]
    .map(([term, value]) => `<tr><th scope="row">${term}</th><td>${value}</td></tr>`)
    .join("");

  return [
    `<p><a href="${escapeHtml(indexHref)}">← Deliveries</a></p>`,
    flash ? `<p id="flash" role="status" data-tone="${flash.tone}" class="card${flash.tone === "error" ? " error" : ""}">${escapeHtml(flash.text)}</p>` : "",
    `<section class="card" aria-labelledby="task-heading"><h2 id="task-heading">Task</h2><table id="task-summary"><tbody>${summary}</tbody></table></section>`,
    `<section class="card" aria-labelledby="webhook-heading"><h2 id="webhook-heading">Webhook</h2>`,
    delivery === null ? `<p id="no-webhook">Submitted without <code>webhook_url</code>: nothing is delivered.</p>` : webhookSection(view, selfHref, csrfField),
    `</section>`,
  ].join("\n");
}

function webhookSection({ task, delivery, attempts }: DeliveryView, selfHref: string, csrfField: string): string {
  // Exactly the API's object (GET /api/v1/tasks/{id}?include=webhook), from the same renderer. The
  // summary shows the delivery row itself: after a redelivery of a delivered webhook the two differ.
  const webhook = taskObject(task, { webhook: delivery }).webhook;
  const row = { status: delivery!.status, attempts: delivery!.attempts };
  const finished = FINISHED.has(row.status);
  const form = finished
    ? `<form id="redeliver-form" method="post" action="${escapeHtml(`${selfHref}/redeliver`)}">${csrfField}<button id="redeliver" type="submit">Redeliver webhook</button> <span>Sends one more attempt now, recorded like the others; no retries follow it.</span></form>`
    : `<form id="redeliver-form" method="post" action="${escapeHtml(`${selfHref}/redeliver`)}">${csrfField}<button id="redeliver" type="submit" disabled aria-describedby="redeliver-note">Redeliver webhook</button> <span id="redeliver-note">Possible once the delivery is delivered or failed; it is ${escapeHtml(row.status)}. <a href="${escapeHtml(selfHref)}">Reload</a></span></form>`;
  return [
    `<table id="webhook-summary"><tbody>`,
    `<tr><th scope="row">URL (query values masked)</th><td><code id="webhook-url">${escapeHtml(maskWebhookUrl(delivery!.url))}</code></td></tr>`,
    `<tr><th scope="row">Status</th><td id="webhook-status">${escapeHtml(row.status)}</td></tr>`,
    `<tr><th scope="row">Attempts</th><td id="webhook-attempts">${row.attempts}</td></tr>`,
    `</tbody></table>`,
    `<h3>Webhook object</h3><p>As <code>GET /api/v1/tasks/{id}?include=webhook</code> returns it.</p>`,
    `<pre id="webhook-object">${escapeHtml(JSON.stringify(webhook, null, 2))}</pre>`,
    form,
    `<h3>Attempts</h3>`,
    attemptsTable("attempts", "Every attempt, oldest first", attempts),
  ].join("\n");
}
