import { findTask, findTasksByRequestId, listUserTasks, type Database, type Task } from "@gen/db";
import { TASK_ID_PATTERN } from "@gen/ids";

/** What the search box was read as: a task id, a request id (`req_...`), or a user id. */
export type TaskQuery = { kind: "task" | "request" | "user"; value: string };

const REQUEST_ID = /^req_[0-9a-f]{24}$/;
// User ids as the admin CLI accepts them (generated ones are usr_<hex>).
const USER_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Reads the search box; undefined for text that is none of the three (nothing is queried for it). */
export function readTaskQuery(raw: string): TaskQuery | undefined {
  const value = raw.trim();
  if (TASK_ID_PATTERN.test(value)) return { kind: "task", value };
  if (REQUEST_ID.test(value)) return { kind: "request", value };
  if (USER_ID.test(value)) return { kind: "user", value };
  return undefined;
}

/** How many tasks a search lists: a user's latest, or a request's. */
export const LISTED_TASKS = 50;

/** The tasks a query names: the one task, the request's tasks, or the user's latest. */
export async function findTasks(db: Database, query: TaskQuery): Promise<Task[]> {
  switch (query.kind) {
    case "task": {
      const task = await findTask(db, query.value);
      return task ? [task] : [];
    }
    case "request":
      return findTasksByRequestId(db, query.value, LISTED_TASKS);
    case "user":
      return listUserTasks(db, query.value, LISTED_TASKS);
  }
}
