/** Tasks per page of `GET /api/v1/tasks`: without `limit`, and the most a `limit` may ask for. */
export const TASK_LIST_LIMIT = Object.freeze({ default: 20, max: 100 });
