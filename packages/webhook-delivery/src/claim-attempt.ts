import { claimAttemptRows, type Database, type TaskForBody } from "@gen/db";
import { newDeliveryId } from "@gen/ids";
import { gatheredStatement } from "./gathered-statement.ts";

const claimRow = gatheredStatement(claimAttemptRows);

export interface ClaimedAttempt {
  id: string;
  startedAt: Date;
  /** The operator who asked for this attempt (a manual redelivery); null for a scheduled one. */
  requestedBy: string | null;
  /** The request id of the task's submission, named by the attempt's log lines. */
  requestId: string | null;
  /** The task as the claim read it, to render the body from. */
  task: TaskForBody;
}

/**
 * The claim: the delivery moves to `in_progress` on attempt `attempt` and the attempt log gets its
 * row under a new whd_ id, in one conditional statement that also reads the task the body is
 * rendered from, so of two workers holding the same job only one gets the claim (null for the other).
 * Claims of concurrent attempts share one statement (gathered-statement.ts), each row conditional.
 */
export async function claimAttempt(db: Database, taskId: string, attempt: number, now: Date): Promise<ClaimedAttempt | null> {
  const id = newDeliveryId();
  const claimed = await claimRow(db, { taskId, attempt, id, now });
  return claimed ? { id, startedAt: now, requestedBy: claimed.requestedBy, requestId: claimed.requestId, task: claimed.task } : null;
}
