import { findVisibleTask, type Database, type Task } from "@gen/db";

/** The caller's own, visible task, or null (another user's task looks exactly like a missing one). */
export async function readTask(db: Database, id: string, userId: string): Promise<Task | null> {
  return (await findVisibleTask(db, id, userId)) ?? null;
}
