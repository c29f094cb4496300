import type { TaskListPosition, TaskListQuery } from "@gen/db";
import { ENDPOINTS, TASK_LIST_LIMIT, TASK_STATUSES, isEndpoint, type TaskStatus } from "@gen/domain";
import { ApiError, Err } from "@gen/errors";

const MAX_MODEL_LENGTH = 200;
const PARAMETERS = new Set(["status", "model", "endpoint", "created_after", "created_before", "limit", "cursor"]);
const STATUSES: readonly string[] = TASK_STATUSES;

/**
 * The listing a query string asks for, or 20003 naming the first parameter that is unknown,
 * repeated or invalid: nothing a client sends reaches the statement unchecked. `limit` is what the
 * page shows; the statement reads one more, to know whether a next page exists.
 */
export function parseTaskListQuery(query: Record<string, unknown>, userId: string): TaskListQuery {
  for (const name of Object.keys(query)) {
    if (!PARAMETERS.has(name)) throw invalid(`Unknown query parameter: ${JSON.stringify(name.slice(0, 40))}`);
  }
  const status = one(query, "status");
  const model = one(query, "model");
  const endpoint = one(query, "endpoint");
  const limit = one(query, "limit");
  const cursor = one(query, "cursor");
  const listing: TaskListQuery = { userId, limit: limit === undefined ? TASK_LIST_LIMIT.default : parseLimit(limit) };
  if (status !== undefined) {
    if (!STATUSES.includes(status)) throw invalid(`Invalid value for status: must be one of ${STATUSES.join(", ")}`);
    listing.status = status as TaskStatus;
  }
  if (model !== undefined) {
    if (model === "" || model.length > MAX_MODEL_LENGTH) throw invalid(`Invalid value for model: 1-${MAX_MODEL_LENGTH} characters`);
    listing.model = model;
  }
  if (endpoint !== undefined) {
    if (!isEndpoint(endpoint)) throw invalid(`Invalid value for endpoint: must be one of ${ENDPOINTS.join(", ")}`);
    listing.endpoint = endpoint;
  }
  const after = one(query, "created_after");
  const before = one(query, "created_before");
  if (after !== undefined) listing.createdAfter = parseInstant(after, "created_after");
  if (before !== undefined) listing.createdBefore = parseInstant(before, "created_before");
  if (cursor !== undefined) listing.after = decodeCursor(cursor);
  return listing;
}

function one(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw invalid(`Invalid value for ${name}: give it once`);
  return value;
}

function parseLimit(value: string): number {
  const limit = /^\d{1,3}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= TASK_LIST_LIMIT.max)) throw invalid(`Invalid value for limit: an integer from 1 to ${TASK_LIST_LIMIT.max}`);
  return limit;
}

// Unix seconds, like the tasks' `created_at`, or an ISO 8601 date-time with its offset.
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const MAX_INSTANT_MS = 8.64e15;

function parseInstant(value: string, name: string): Date {
  const ms = /^\d{1,12}$/.test(value) ? Number(value) * 1000 : ISO_DATE_TIME.test(value) ? Date.parse(value) : NaN;
  if (!(ms >= 0 && ms <= MAX_INSTANT_MS)) throw invalid(`Invalid value for ${name}: Unix seconds or an ISO 8601 date-time`);
  return new Date(ms);
}

/**
 * The cursor is the position of the page's last task, base64url-encoded: opaque to clients, and
 * checked in full when it comes back. A forged one can only move the listing within the caller's
 * own tasks (the statement always filters on the key's user), so it needs no signature.
 */
export function encodeCursor(position: TaskListPosition): string {
  return Buffer.from(`${position.createdAt.getTime()}:${position.id}`).toString("base64url");
}

const CURSOR = /^(\d{1,15}):(task_[0-9a-f]{32})$/;

function decodeCursor(cursor: string): TaskListPosition {
  const match = cursor.length <= 80 && /^[A-Za-z0-9_-]+$/.test(cursor) ? CURSOR.exec(Buffer.from(cursor, "base64url").toString("latin1")) : null;
  const ms = match ? Number(match[1]) : NaN;
  if (!match || !(ms <= MAX_INSTANT_MS)) {
    throw invalid("Invalid value for cursor: pass back the next_cursor of a previous page unchanged");
  }
  return { createdAt: new Date(ms), id: match[2]! };
}

const invalid = (message: string) => new ApiError(Err.ParameterInvalid, message);
