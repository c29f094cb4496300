import { sql, type ExpressionBuilder } from "kysely";
import { DeliveryStatus } from "@gen/domain";
import { compiledOnce } from "../compiled-once.ts";
import type { Queryable } from "../queryable.ts";
import type { Tables } from "../tables.ts";
import { TASK_SELECTION, type Task } from "../tasks.ts";

// The task's columns, qualified: the delivery's share some of their names (status, updated_at).
const TASK_COLUMNS = TASK_SELECTION.map((column) => `t.${column}` as const);

// The delivery's columns, and the attempt that first delivered it, under names of their own.
const DELIVERY_COLUMNS = [
  "w.task_id as wTaskId",
  "w.url as wUrl",
  "w.status as wStatus",
  "w.attempts as wAttempts",
  "w.response_status as wResponseStatus",
  "w.last_error as wLastError",
  "w.last_attempt_at as wLastAttemptAt",
  "w.delivered_at as wDeliveredAt",
  "w.updated_at as wUpdatedAt",
  "w.next_attempt_at as wNextAttemptAt",
  "w.redelivery_requested_by as wRedeliveryRequestedBy",
  "f.attempt_no as firstNo",
  "f.started_at as firstStartedAt",
  "f.finished_at as firstFinishedAt",
  "f.response_status as firstStatus",
] as const;

/** The attempt that first delivered: one probe of the (task_id, attempt_no) index, for delivered ones only. */
const firstDelivered = (eb: ExpressionBuilder<Tables & { w: Tables["webhook_deliveries"] }, "w">) =>
  eb
    .selectFrom("webhook_attempts as a")
    .select(["a.attempt_no", "a.started_at", "a.finished_at", "a.response_status"])
    .whereRef("a.task_id", "=", "w.task_id")
    .where("a.outcome", "=", DeliveryStatus.Delivered)
    .orderBy("a.attempt_no")
    .limit(1)
    .as("f");

/**
 * Tasks among `ids` with their delivery, in ONE statement, so under one snapshot: a poll with
 * `?include=webhook` never shows a task still running beside a delivered webhook, which two reads
 * could (the task read, then its terminal commit and the delivery, then the delivery read).
 * Shape `visible`: the poll's read (not discarded); `any`: the console's and tests' read of a delivery.
 */
const tasksWithDeliveryStatement = compiledOnce((k, shape: string, ids: readonly string[]) => {
  const query = k
    .selectFrom("tasks as t")
    .leftJoin("webhook_deliveries as w", "w.task_id", "t.id")
    .leftJoinLateral(firstDelivered, (join) => join.on("w.delivered_at", "is not", null))
    .select(TASK_COLUMNS)
    .select(DELIVERY_COLUMNS)
    .where("t.id", "=", sql<string>`any(${ids}::text[])`);
  return shape === "visible" ? query.where("t.discarded_at", "is", null) : query;
});

type JoinedRow = Awaited<ReturnType<typeof tasksWithDeliveryStatement>>[number];

/** A task as a poll with `?include=webhook` reads it: its delivery (null when it has no webhook) read with it. */
export type TaskWithDelivery = Task & { webhook: DeliveryRecord | null };

/** The tasks among `ids` that were not discarded, each with its delivery as of the same instant; in no particular order. */
export async function findVisibleTasksWithDelivery(db: Queryable, ids: readonly string[]): Promise<TaskWithDelivery[]> {
  const rows = await tasksWithDeliveryStatement(db, "visible", ids);
  return rows.map((row) => {
    const { webhook, task } = split(row);
    return { ...task, webhook };
  });
}

/**
 * A task's delivery and the attempt that first delivered it: once a webhook is delivered the API
 * shows that attempt (@gen/task-render), whatever an operator's redelivery did since.
 * `delivered` is the attempt log's outcome of a 2xx.
 */
export async function readDelivery(db: Queryable, taskId: string): Promise<DeliveryRecord | null> {
  const [row] = await tasksWithDeliveryStatement(db, "any", [taskId]);
  return row === undefined ? null : split(row).webhook;
}

function split(row: JoinedRow) {
  const {
    wTaskId,
    wUrl,
    wStatus,
    wAttempts,
    wResponseStatus,
    wLastError,
    wLastAttemptAt,
    wDeliveredAt,
    wUpdatedAt,
    wNextAttemptAt,
    wRedeliveryRequestedBy,
    firstNo,
    firstStartedAt,
    firstFinishedAt,
    firstStatus,
    ...task
  } = row;
  const webhook =
    wTaskId === null || wUrl === null || wStatus === null || wAttempts === null || wUpdatedAt === null
      ? null
      : {
          taskId: wTaskId,
          url: wUrl,
          status: wStatus,
          attempts: wAttempts,
          responseStatus: wResponseStatus,
          lastError: wLastError,
          lastAttemptAt: wLastAttemptAt,
          deliveredAt: wDeliveredAt,
          updatedAt: wUpdatedAt,
          nextAttemptAt: wNextAttemptAt,
          redeliveryRequestedBy: wRedeliveryRequestedBy,
          deliveredBy:
            firstNo === null || firstStartedAt === null
              ? null
              : { attemptNo: firstNo, startedAt: firstStartedAt, finishedAt: firstFinishedAt, responseStatus: firstStatus },
        };
  return { task, webhook };
}

/** A delivery row as the API and the console show it, with the attempt that first delivered it. */
export interface DeliveryRecord {
  taskId: string;
  url: string;
  status: Tables["webhook_deliveries"]["status"];
  attempts: number;
  responseStatus: number | null;
  lastError: Tables["webhook_deliveries"]["last_error"];
  lastAttemptAt: Date | null;
  deliveredAt: Date | null;
  updatedAt: Date;
  nextAttemptAt: Date | null;
  redeliveryRequestedBy: string | null;
  deliveredBy: FirstDelivery | null;
}

/** The attempt-log row of the first attempt answered with a 2xx. */
export interface FirstDelivery {
  attemptNo: number;
  startedAt: Date;
  finishedAt: Date | null;
  responseStatus: number | null;
}
