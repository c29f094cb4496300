import { TASK_COLUMNS, type Database, type Task } from "@gen/db";

// Polling is the busiest path: plain SQL with Prisma's shapes (see SqlPool in @gen/db).

/** The caller's own, visible task, or null (another user's task looks exactly like a missing one). */
export async function readTask(db: Database, id: string, userId: string): Promise<Task | null> {
  const { rows } = await db.$sql.query<Task>(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.id = $1 AND t.user_id = $2 AND t.discarded_at IS NULL`, [id, userId]);
  return rows[0] ?? null;
}
