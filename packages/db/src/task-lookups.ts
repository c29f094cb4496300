import type { Queryable } from "./queryable.ts";
import { TASK_SELECTION, type Task } from "./tasks.ts";

// The operators' ways to a task besides its id (the console, the admin CLI): every task whoever
// owns it, discarded ones included (they explain a missing webhook or a refund).

/** The tasks a request created (the `req_...` the API answered with), oldest first: an index probe (tasks_request_id_idx). */
export function findTasksByRequestId(db: Queryable, requestId: string, limit = 50): Promise<Task[]> {
  return db.$kysely.selectFrom("tasks").select(TASK_SELECTION).where("request_id", "=", requestId).orderBy("created_at").limit(limit).execute();
}

/** A user's latest tasks, newest first: a backward scan of the (user_id, created_at) index. */
export function listUserTasks(db: Queryable, userId: string, limit = 50): Promise<Task[]> {
  return db.$kysely
    .selectFrom("tasks")
    .select(TASK_SELECTION)
    .where("user_id", "=", userId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
}
