import type { Database } from "./create-database.ts";
import type { WebhookDelivery } from "./generated/client.ts";
import { WEBHOOK_DELIVERY_COLUMNS } from "./sql-columns.ts";

/** The attempt-log row of the first attempt answered with a 2xx. */
export interface FirstDelivery {
  attemptNo: number;
  startedAt: Date;
  finishedAt: Date | null;
  responseStatus: number | null;
}

type Row = WebhookDelivery & { firstNo: number | null; firstStartedAt: Date | null; firstFinishedAt: Date | null; firstStatus: number | null };

/**
 * A task's delivery and, in the same statement, the attempt that first delivered it: once a webhook
 * is delivered the API shows that attempt (@gen/task-render), whatever an operator's redelivery did
 * since. The lateral read is one probe of the (task_id, attempt_no) index, for delivered ones only.
 * `delivered` is the attempt log's outcome of a 2xx.
 */
export async function readDelivery(db: Database, taskId: string): Promise<(WebhookDelivery & { deliveredBy: FirstDelivery | null }) | null> {
  const { rows } = await db.$sql.query<Row>(
    `SELECT ${WEBHOOK_DELIVERY_COLUMNS}, f.attempt_no AS "firstNo", f.started_at AS "firstStartedAt", f.finished_at AS "firstFinishedAt", f.response_status AS "firstStatus"
       FROM webhook_deliveries w
       LEFT JOIN LATERAL (
         SELECT a.attempt_no, a.started_at, a.finished_at, a.response_status FROM webhook_attempts a
          WHERE a.task_id = w.task_id AND a.outcome = 'delivered' ORDER BY a.attempt_no LIMIT 1
       ) f ON w.delivered_at IS NOT NULL
      WHERE w.task_id = $1`,
    [taskId],
  );
  const row = rows[0];
  if (!row) return null;
  const { firstNo, firstStartedAt, firstFinishedAt, firstStatus, ...delivery } = row;
  const deliveredBy = firstNo === null ? null : { attemptNo: firstNo, startedAt: firstStartedAt!, finishedAt: firstFinishedAt, responseStatus: firstStatus };
  return { ...delivery, deliveredBy };
}
