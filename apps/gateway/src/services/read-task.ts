import { findVisibleTask, readDelivery, type Database, type Task } from "@gen/db";
import { isTerminalTask } from "@gen/domain";
import { renderTask } from "@gen/task-render";
import type { FinishedTaskCache } from "./finished-task-cache.ts";

/** The caller's own, visible task, or null (another user's task looks exactly like a missing one). */
export async function readTask(db: Database, id: string, userId: string): Promise<Task | null> {
  return (await findVisibleTask(db, id, userId)) ?? null;
}

/**
 * The body of `GET /api/v1/tasks/{id}` for its owner, or null (not theirs, or no such task).
 *
 * An answer is kept in the process's FinishedTaskCache only once it can never change: the task is
 * terminal (its row is final: settlement writes status, charge and refund in one transaction, and a
 * terminal task is never discarded) and, when the answer shows the webhook, there is none or it is
 * delivered (@gen/task-render then shows the first delivering attempt, finished, whatever a later
 * manual redelivery does to the row). A pending, in-progress or failed delivery can still move (a failed one by a
 * console redelivery), so those answers are read afresh every time. A task's owner never changes,
 * so a cached answer for someone else is a 40001 without a read.
 */
export async function readTaskAnswer(
  deps: { db: Database; finishedTasks: FinishedTaskCache },
  id: string,
  userId: string,
  include: { webhook: boolean; billing: boolean },
): Promise<string | null> {
  const cacheKey = `${id}:${include.webhook ? "w" : ""}${include.billing ? "b" : ""}`;
  const cached = deps.finishedTasks.get(cacheKey);
  if (cached !== undefined) return cached.userId === userId ? cached.body : null;
  const task = await readTask(deps.db, id, userId);
  if (!task) return null;
  const webhook = include.webhook ? (task.webhookUrl === null ? null : await readDelivery(deps.db, task.id)) : undefined;
  const body = renderTask(task, { webhook, billing: include.billing });
  const final = isTerminalTask(task.status) && (!include.webhook || task.webhookUrl === null || (webhook?.deliveredBy?.finishedAt ?? null) !== null);
  if (final) deps.finishedTasks.set(cacheKey, { userId, body });
  return body;
}
