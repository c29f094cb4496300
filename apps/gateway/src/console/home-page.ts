import { escapeHtml } from "./escape-html.ts";

export interface QueueCounts {
  name: string;
  counts: Record<string, number>;
}

const STATES = ["waiting", "active", "delayed", "failed", "completed"] as const;

export function homePage(queues: QueueCounts[]): string {
  const rows = queues
    .map((q) => `<tr><th scope="row">${escapeHtml(q.name)}</th>${STATES.map((s) => `<td>${q.counts[s] ?? 0}</td>`).join("")}</tr>`)
    .join("");
  return `<section class="card"><h2>Queues</h2>
<table id="queue-counts"><thead><tr><th>Queue</th>${STATES.map((s) => `<th>${s}</th>`).join("")}</tr></thead><tbody>${rows}</tbody></table>
<p><a href="/console/queues">Open the queue dashboard</a> to inspect, retry or clean jobs.</p></section>
<section class="card"><h2>Webhook deliveries</h2>
<form method="get" action="/console/deliveries" id="home-find-task"><label for="home-task-id">Task id</label>
<input id="home-task-id" name="task_id" placeholder="task_…" pattern="task_[0-9a-f]{32}" required> <button type="submit">Find</button></form>
<p><a href="/console/deliveries">Deliveries per minute, latest attempts, manual redelivery</a></p></section>
<section class="card"><h2>Metrics</h2><p>Prometheus text at <code>/metrics</code> on each gateway's <code>GATEWAY_METRICS_PORT</code> and each worker's <code>WORKER_METRICS_PORT</code> (not on the API port).</p></section>`;
}
