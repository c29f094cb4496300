import { escapeHtml } from "../console-ui.ts";

export function findTaskForm(baseHref: string): string {
  return (
    `<form id="find-task" method="get" action="${escapeHtml(baseHref)}" role="search">` +
    `<label for="task-id">Task id</label> <input id="task-id" name="task_id" type="search" required spellcheck="false" autocomplete="off" placeholder="task_…" size="42" maxlength="200">` +
    ` <button type="submit">Find</button></form>`
  );
}

/** Unknown and malformed ids alike: the id as typed (escaped, cut short) and the search again. */
export function notFoundPage(baseHref: string, id: string): string {
  const shown = id.length > 80 ? `${id.slice(0, 80)}…` : id;
  return [
    `<p><a href="${escapeHtml(baseHref)}">← Deliveries</a></p>`,
    `<p id="not-found" role="status" class="card">No task has the id <code>${escapeHtml(shown)}</code>. Task ids look like <code>task_</code> followed by 32 hex digits.</p>`,
    `<section class="card">${findTaskForm(baseHref)}</section>`,
  ].join("\n");
}
