import { findTask, readDelivery, type Database, type FirstDelivery, type Task, type WebhookAttempt, type WebhookDelivery } from "@gen/db";

export interface DeliveryView {
  task: Task;
  /** Null when the task was submitted without webhook_url. The row is the operator's whole truth; the API shows it through the renderer. */
  delivery: (WebhookDelivery & { deliveredBy: FirstDelivery | null }) | null;
  /** Every attempt, in order. */
  attempts: WebhookAttempt[];
}

/** Operators see every task, whoever owns it (discarded ones too: they explain a missing webhook). */
export async function loadDeliveryView(db: Database, taskId: string): Promise<DeliveryView | null> {
  const task = await findTask(db, taskId);
  if (!task) return null;
  // Attempts first, then the delivery: an attempt and the delivery row are finished in one
  // statement, so a delivery read after the attempts is never older than them (read in parallel,
  // the page could show attempt 4 delivered next to a delivery still in_progress).
  const attempts = await db.webhookAttempt.findMany({ where: { taskId }, orderBy: { attemptNo: "asc" } });
  const delivery = await readDelivery(db, taskId);
  return { task, delivery, attempts };
}

/** The latest finished attempts of all tasks: a backward scan of the (finished_at, started_at) index. */
export function loadRecentAttempts(db: Database, limit = 20): Promise<WebhookAttempt[]> {
  return db.webhookAttempt.findMany({ where: { finishedAt: { not: null } }, orderBy: { finishedAt: "desc" }, take: limit });
}
