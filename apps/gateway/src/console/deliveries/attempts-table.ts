import type { WebhookAttempt } from "@gen/db";
import { escapeHtml } from "../console-ui.ts";

const time = (date: Date | null) => (date === null ? "" : `<time datetime="${date.toISOString()}">${date.toISOString()}</time>`);

/**
 * The attempt log as a table: start time, whd_ delivery id, outcome (`delivered` or the attempt's
 * `last_error`), response status, duration, and who asked for it when it was a manual redelivery.
 * `taskHref` adds a task column linking to each task's view (the index page's recent list).
 */
export function attemptsTable(id: string, caption: string, attempts: WebhookAttempt[], taskHref?: (taskId: string) => string): string {
  const head = `<tr>${taskHref ? `<th scope="col">Task</th>` : ""}<th scope="col">#</th><th scope="col">Started (UTC)</th><th scope="col">Delivery id</th><th scope="col">Outcome</th><th scope="col">Response status</th><th scope="col">Duration (ms)</th><th scope="col">Requested by</th></tr>`;
  const rows = attempts.map((attempt) => {
    const outcome = attempt.outcome ?? (attempt.finishedAt === null ? "running" : "");
    const task = taskHref ? `<td><a href="${escapeHtml(taskHref(attempt.taskId))}">${escapeHtml(attempt.taskId)}</a></td>` : "";
    return (
      `<tr data-testid="attempt-row" data-attempt-no="${attempt.attemptNo}" data-outcome="${escapeHtml(outcome)}">${task}` +
      `<td>${attempt.attemptNo}</td><td>${time(attempt.startedAt)}</td><td><code>${escapeHtml(attempt.id)}</code></td>` +
      `<td data-testid="attempt-outcome">${escapeHtml(outcome)}</td><td>${attempt.responseStatus ?? ""}</td><td>${attempt.durationMs ?? ""}</td>` +
      `<td>${attempt.requestedBy === null ? "schedule" : escapeHtml(attempt.requestedBy)}</td></tr>`
    );
  });
  // The empty note stays outside tbody, so `#<id> tbody tr` counts attempts only.
  const empty = rows.length === 0 ? `<p id="${id}-empty">No attempts yet.</p>` : "";
  return `<table id="${id}"><caption>${escapeHtml(caption)}</caption><thead>${head}</thead><tbody>${rows.join("")}</tbody></table>${empty}`;
}
