import type { Database } from "./create-database.ts";
import type { Task } from "./generated/client.ts";
import { TASK_COLUMNS } from "./sql-columns.ts";

/**
 * A task by id, discarded or not, as the generation worker reloads it at every step (one per poll
 * of a running upstream job): plain SQL with Prisma's shape, at a tenth of Prisma's CPU.
 */
export async function loadTask(db: Database, id: string): Promise<Task | null> {
  const { rows } = await db.$sql.query<Task>(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.id = $1`, [id]);
  return rows[0] ?? null;
}
