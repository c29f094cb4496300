import type { Database } from "@gen/db";
import type { HookReceiver } from "./hook-receiver.ts";
import { findRows } from "../../support/db-rows.ts";

export interface LossReport {
  tasks: number;
  completed: number;
  failed: number;
  /** Rolled back at submission (60002): hidden, fully refunded, never run. */
  discarded: number;
  webhooks: number;
  delivered: number;
  webhookFailed: number;
  /** Webhook POSTs the receiver got. */
  posts: number;
  /** Tasks whose receiver got more than one POST it meant to accept; each follows an `attempt_lost`. */
  duplicates: number;
  lostAttempts: number;
}

// Attempt outcomes after which nothing can have reached the receiver.
const NOT_SENT = new Set(["stale_claim", "blocked_private_address", "dns_failed", "render_timeout", "render_failed"]);

/** Polls until every task is terminal and every webhook delivered or failed; returns the time taken. */
export async function waitSettled(db: Database, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const [open] = await db.$sql.rows<{ tasks: number; webhooks: number }>`
      SELECT (SELECT count(*)::int FROM tasks WHERE status NOT IN ('completed', 'failed') AND discarded_at IS NULL) AS tasks,
             (SELECT count(*)::int FROM webhook_deliveries d JOIN tasks t ON t.id = d.task_id
               WHERE d.status NOT IN ('delivered', 'failed') AND t.discarded_at IS NULL) AS webhooks`;
    if (open!.tasks === 0 && open!.webhooks === 0) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`not settled after ${timeoutMs} ms: ${open!.tasks} tasks and ${open!.webhooks} webhooks still open`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The fault suite's definition of "nothing lost", over the whole database (each scenario has one
 * of its own): every accepted task exists and is terminal (or was rolled back at submission),
 * every webhook is `delivered` or `failed` with no attempt left open, the receiver got what the
 * attempt log says was sent (a second accepted POST only after an `attempt_lost`, or for an
 * operator's redelivery), and the ledger holds (balance = sum of deltas; per task one reserve, one
 * charge, at most one refund, reserve = charge + refund, matching the task's columns).
 */
export async function expectNothingLost(db: Database, receiver: HookReceiver, acceptedTaskIds: readonly string[]): Promise<LossReport> {
  const tasks = await findRows(db, "tasks");
  const byId = new Map(tasks.map((task) => [task.id, task]));
  expect(acceptedTaskIds.filter((id) => !byId.has(id))).toEqual([]);
  const open = tasks.filter((task) => task.discardedAt === null && task.status !== "completed" && task.status !== "failed");
  expect(open.map((task) => `${task.id}:${task.status}`)).toEqual([]);

  const deliveries = await findRows(db, "webhook_deliveries");
  const live = deliveries.filter((d) => byId.get(d.taskId)?.discardedAt === null);
  expect(live.filter((d) => d.status !== "delivered" && d.status !== "failed").map((d) => `${d.taskId}:${d.status}`)).toEqual([]);
  const attempts = await findRows(db, "webhook_attempts");
  expect(attempts.filter((a) => a.finishedAt === null).map((a) => a.taskId)).toEqual([]);

  const problems: string[] = [];
  let duplicates = 0;
  for (const taskId of receiver.posts.keys()) {
    if (!byId.get(taskId)?.webhookUrl) problems.push(`${taskId}: POST for a task without a webhook`);
  }
  for (const delivery of live) {
    const posts = receiver.posts.get(delivery.taskId) ?? [];
    const log = attempts.filter((a) => a.taskId === delivery.taskId);
    const surelySent = log.filter((a) => a.outcome === "delivered" || a.outcome?.startsWith("http_")).length;
    const maybeSent = log.filter((a) => !NOT_SENT.has(a.outcome ?? "")).length;
    if (posts.length < surelySent || posts.length > maybeSent) {
      problems.push(`${delivery.taskId}: receiver got ${posts.length} POSTs, attempt log ${log.map((a) => a.outcome).join(",")}`);
    }
    if (delivery.status === "delivered" && posts.length === 0) problems.push(`${delivery.taskId}: delivered but never received`);
    // Each operator's redelivery (requested_by set) is one more POST on purpose, not a duplicate.
    const manual = log.filter((a) => a.requestedBy !== null).length;
    if (posts.filter((post) => post.status < 300).length > 1 + manual) {
      duplicates++;
      if (!log.some((a) => a.outcome === "attempt_lost")) problems.push(`${delivery.taskId}: accepted twice without a lost attempt`);
    }
  }
  expect(problems).toEqual([]);

  const ledger = await db.$sql.rows<{
    taskId: string;
    reserves: number;
    charges: number;
    refunds: number;
    reserved: number;
    charged: number;
    refunded: number;
  }>`
    SELECT task_id AS "taskId",
           count(*) FILTER (WHERE kind = 'reserve')::int AS reserves, count(*) FILTER (WHERE kind = 'charge')::int AS charges,
           count(*) FILTER (WHERE kind = 'refund')::int AS refunds,
           coalesce(sum(amount) FILTER (WHERE kind = 'reserve'), 0)::int AS reserved,
           coalesce(sum(amount) FILTER (WHERE kind = 'charge'), 0)::int AS charged,
           coalesce(sum(amount) FILTER (WHERE kind = 'refund'), 0)::int AS refunded
      FROM ledger_entries WHERE task_id IS NOT NULL GROUP BY task_id`;
  const ledgerById = new Map(ledger.map((row) => [row.taskId, row]));
  const ledgerProblems: string[] = [];
  for (const task of tasks) {
    const row = ledgerById.get(task.id);
    const ok =
      row !== undefined &&
      row.reserves === 1 &&
      row.charges === 1 &&
      row.refunds <= 1 &&
      row.reserved === task.reservedCredits &&
      row.reserved === row.charged + row.refunded &&
      row.charged === task.chargedCredits &&
      row.refunded === (task.refundedCredits ?? 0);
    if (!ok) ledgerProblems.push(`${task.id}: ${JSON.stringify(row)} vs task ${task.reservedCredits}/${task.chargedCredits}/${task.refundedCredits}`);
  }
  const balances = await db.$sql.rows<{ id: string; credits: number; sum: number }>`
    SELECT u.id, u.credits, coalesce(sum(l.delta), 0)::int AS sum FROM users u LEFT JOIN ledger_entries l ON l.user_id = u.id GROUP BY u.id, u.credits`;
  for (const user of balances) if (user.credits !== user.sum) ledgerProblems.push(`${user.id}: balance ${user.credits}, ledger sum ${user.sum}`);
  expect(ledgerProblems).toEqual([]);

  return {
    tasks: tasks.length,
    completed: tasks.filter((t) => t.discardedAt === null && t.status === "completed").length,
    failed: tasks.filter((t) => t.discardedAt === null && t.status === "failed").length,
    discarded: tasks.filter((t) => t.discardedAt !== null).length,
    webhooks: live.length,
    delivered: live.filter((d) => d.status === "delivered").length,
    webhookFailed: live.filter((d) => d.status === "failed").length,
    posts: receiver.total(),
    duplicates,
    lostAttempts: attempts.filter((a) => a.outcome === "attempt_lost").length,
  };
}

/** The one line each scenario prints. */
export function summaryLine(fault: string, report: LossReport, recoveredMs: number, extra = ""): string {
  return (
    `[faults] ${fault}: tasks ${report.tasks} (completed ${report.completed}, failed ${report.failed}, rolled back ${report.discarded}), ` +
    `webhooks ${report.webhooks} (delivered ${report.delivered}, failed ${report.webhookFailed}), POSTs ${report.posts}, ` +
    `duplicates ${report.duplicates} (attempt_lost ${report.lostAttempts}), recovered in ${(recoveredMs / 1000).toFixed(1)} s${extra ? `, ${extra}` : ""}\n`
  );
}
