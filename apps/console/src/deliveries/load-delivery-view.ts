import { findTask, listAttempts, listRecentAttempts, readDelivery, type AttemptLogRow, type Database, type DeliveryRecord, type Task } from "@gen/db";

export interface DeliveryView {
  task: Task;
  /** Null when the task was submitted without webhook_url. The row is the operator's whole truth; the API shows it through the renderer. */
  delivery: DeliveryRecord | null;
  /** Every attempt, in order. */
  attempts: AttemptLogRow[];
}

/** Operators see every task, whoever owns it (discarded ones too: they explain a missing webhook). */
export async function loadDeliveryView(db: Database, taskId: string): Promise<DeliveryView | null> {
  const task = await findTask(db, taskId);
  if (!task) return null;
  // Attempts first, then the delivery: an attempt and the delivery row are finished in one
  // statement, so a delivery read after the attempts is never older than them (read in parallel,
  // the page could show attempt 4 delivered next to a delivery still in_progress).
  const attempts = await listAttempts(db, taskId);
  const delivery = await readDelivery(db, taskId);
  return { task, delivery, attempts };
}

/** The latest finished attempts of all tasks. */
export function loadRecentAttempts(db: Database, limit = 20): Promise<AttemptLogRow[]> {
  return listRecentAttempts(db, limit);
}
