import { TASK_FOR_BODY_COLUMNS, claimAttemptRows, type Database, type FirstClaim, type FirstClaimRequest, type TaskForBody } from "@gen/db";
import { newDeliveryId } from "@gen/ids";
import { gatheredStatement } from "./gathered-statement.ts";

const claimRow = gatheredStatement(claimAttemptRows);

export interface ClaimedAttempt {
  id: string;
  startedAt: Date;
  /** The operator who asked for this attempt (a manual redelivery); null for a scheduled one. */
  requestedBy: string | null;
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
  return claimed ? { id, startedAt: now, requestedBy: claimed.requestedBy, task: claimed.task } : null;
}

/** Attempt 1's claim for the settlement to make in its own statement (settleTask's `claimFirst`), for a caller that holds the receiver's ticket. */
export function firstClaimRequest(): FirstClaimRequest {
  return { attemptId: newDeliveryId() };
}

/**
 * The claim the settlement made (`firstClaimRequest`), as claimAttempt would have returned it: the
 * task as the statement wrote it is what the body is rendered from, and the attempt started at its
 * finish. Null when nothing was claimed (its delivery was not pending, or there was none).
 */
export function claimedWithSettlement(
  request: FirstClaimRequest,
  settled: TaskForBody & { finishedAt: Date | null; firstClaim?: FirstClaim | null },
): ClaimedAttempt | null {
  if (!settled.firstClaim || !settled.finishedAt) return null;
  const task = Object.fromEntries(TASK_FOR_BODY_COLUMNS.map((column) => [column, settled[column]])) as TaskForBody;
  return { id: request.attemptId, startedAt: settled.finishedAt, requestedBy: settled.firstClaim.requestedBy, task };
}
