import type { WebhookAttempt } from "@gen/db";
import { attemptsTable } from "./attempts-table.ts";
import { findTaskForm } from "./find-task-form.ts";
import type { DeliveryStats } from "./delivery-stats.ts";
import { renderStatsChart } from "./stats-chart.ts";

export interface IndexPageOptions {
  baseHref: string;
  stats: DeliveryStats;
  recent: WebhookAttempt[];
}

/** The delivery view's start: find a task, the last hour at a glance, and the latest attempts. */
export function indexPage({ baseHref, stats, recent }: IndexPageOptions): string {
  return [
    `<section class="card">${findTaskForm(baseHref)}</section>`,
    `<section class="card" aria-labelledby="chart-heading"><h2 id="chart-heading">Attempts per minute, last hour</h2>`,
    renderStatsChart(stats, `${baseHref}/stats.json`),
    `</section>`,
    `<section class="card" aria-labelledby="recent-heading"><h2 id="recent-heading">Latest attempts</h2>`,
    attemptsTable("recent-attempts", `The ${recent.length} most recently finished attempts`, recent, (taskId) => `${baseHref}/${encodeURIComponent(taskId)}`),
    `</section>`,
  ].join("\n");
}
