import type { Endpoint, TaskStatus } from "@gen/domain";
import type { Queryable } from "./queryable.ts";
import { TASK_SELECTION, type Task } from "./tasks.ts";

/** Where a listing resumes: the last task of the previous page. */
export interface TaskListPosition {
  createdAt: Date;
  id: string;
}

/** One page of a user's tasks: newest first, every filter optional. */
export interface TaskListQuery {
  userId: string;
  status?: TaskStatus;
  model?: string;
  endpoint?: Endpoint;
  /** Created at or after this instant. */
  createdAfter?: Date;
  /** Created strictly before this instant. */
  createdBefore?: Date;
  /** Only tasks after this one in the listing's order (older, or as old with a smaller id). */
  after?: TaskListPosition;
  limit: number;
}

/**
 * A page of the user's own tasks, newest first (ties on `created_at` by id, descending), without
 * the discarded ones. The walk is the index ("user_id", "created_at", "id") read backwards from
 * the position, so a page costs the rows it returns plus those the filters skip, never a sort of
 * the user's tasks.
 */
export async function listTasks(db: Queryable, query: TaskListQuery): Promise<Task[]> {
  let select = db.$kysely.selectFrom("tasks").select(TASK_SELECTION).where("user_id", "=", query.userId).where("discarded_at", "is", null);
  if (query.status !== undefined) select = select.where("status", "=", query.status);
  if (query.model !== undefined) select = select.where("model", "=", query.model);
  if (query.endpoint !== undefined) select = select.where("endpoint", "=", query.endpoint);
  if (query.createdAfter !== undefined) select = select.where("created_at", ">=", query.createdAfter);
  if (query.createdBefore !== undefined) select = select.where("created_at", "<", query.createdBefore);
  const after = query.after;
  if (after !== undefined) select = select.where((eb) => eb(eb.refTuple("created_at", "id"), "<", eb.tuple(after.createdAt, after.id)));
  return select.orderBy("created_at", "desc").orderBy("id", "desc").limit(query.limit).execute();
}
