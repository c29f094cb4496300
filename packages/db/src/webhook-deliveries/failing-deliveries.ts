import { sql, type ExpressionBuilder, type SelectQueryBuilder } from "kysely";
import { DeliveryStatus, type LastError } from "@gen/domain";
import type { Queryable } from "../queryable.ts";
import type { Tables } from "../tables.ts";

/**
 * Which deliveries the console's failure list shows: `dead` ones gave up (status `failed`: no
 * attempt follows unless an operator redelivers), `retrying` ones had a failed attempt and wait
 * for the next (or run it). Every other field narrows the set; absent fields do not.
 */
export interface FailingDeliveryFilter {
  state: "dead" | "retrying" | "any";
  /** The task's owner. */
  userId?: string;
  /** The receiver's host as in its URL, compared without case (no port). */
  host?: string;
  lastError?: LastError;
  /** The last attempt ran in [from, to). */
  from?: Date;
  to?: Date;
}

export interface FailingDelivery {
  taskId: string;
  userId: string;
  url: string;
  status: Tables["webhook_deliveries"]["status"];
  attempts: number;
  lastError: Tables["webhook_deliveries"]["last_error"];
  responseStatus: number | null;
  lastAttemptAt: Date | null;
  /** When the next attempt is due, for one waiting between attempts. */
  nextAttemptAt: Date | null;
}

// The host of a webhook URL: after the scheme and any user-info, up to a port, path, query or
// fragment; an IPv6 literal keeps its brackets. The URL was checked when the task was submitted.
const HOST = sql<string>`lower(substring(w.url from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\\[[^]]*\\]|[^:/?#]*)'))`;

type DeliveryQuery<O> = SelectQueryBuilder<Tables & { w: Tables["webhook_deliveries"]; t: Tables["tasks"] }, "w" | "t", O>;

function filtered<O>(query: DeliveryQuery<O>, filter: FailingDeliveryFilter): DeliveryQuery<O> {
  let q = query;
  if (filter.state === "dead") q = q.where("w.status", "=", DeliveryStatus.Failed);
  else {
    const retrying = (eb: ExpressionBuilder<Tables & { w: Tables["webhook_deliveries"] }, "w">) =>
      eb.and([eb("w.status", "in", [DeliveryStatus.Pending, DeliveryStatus.InProgress]), eb("w.last_error", "is not", null)]);
    q = filter.state === "retrying" ? q.where(retrying) : q.where((eb) => eb.or([eb("w.status", "=", DeliveryStatus.Failed), retrying(eb)]));
  }
  if (filter.userId !== undefined) q = q.where("t.user_id", "=", filter.userId);
  if (filter.host !== undefined) q = q.where(HOST, "=", filter.host.toLowerCase());
  if (filter.lastError !== undefined) q = q.where("w.last_error", "=", filter.lastError);
  if (filter.from !== undefined) q = q.where("w.last_attempt_at", ">=", filter.from);
  if (filter.to !== undefined) q = q.where("w.last_attempt_at", "<", filter.to);
  return q;
}

/** The latest failing deliveries matching `filter`, by last attempt, newest first; at most `limit`. */
export function listFailingDeliveries(db: Queryable, filter: FailingDeliveryFilter, limit: number): Promise<FailingDelivery[]> {
  const query = db.$kysely
    .selectFrom("webhook_deliveries as w")
    .innerJoin("tasks as t", "t.id", "w.task_id")
    .select([
      "w.task_id as taskId",
      "t.user_id as userId",
      "w.url",
      "w.status",
      "w.attempts",
      "w.last_error as lastError",
      "w.response_status as responseStatus",
      "w.last_attempt_at as lastAttemptAt",
      "w.next_attempt_at as nextAttemptAt",
    ]);
  return filtered(query, filter)
    .orderBy("w.last_attempt_at", sql`desc nulls last`)
    .orderBy("w.task_id", "desc")
    .limit(limit)
    .execute();
}

/**
 * Dead deliveries matching `filter` (its state is ignored: only `failed` ones can be redelivered),
 * oldest last attempt first, at most `limit`: the set of a bulk redelivery.
 */
export async function listDeadDeliveryTaskIds(db: Queryable, filter: Omit<FailingDeliveryFilter, "state">, limit: number): Promise<string[]> {
  const query = db.$kysely.selectFrom("webhook_deliveries as w").innerJoin("tasks as t", "t.id", "w.task_id").select("w.task_id as taskId");
  const rows = await filtered(query, { ...filter, state: "dead" })
    .orderBy("w.last_attempt_at")
    .orderBy("w.task_id")
    .limit(limit)
    .execute();
  return rows.map((row) => row.taskId);
}
