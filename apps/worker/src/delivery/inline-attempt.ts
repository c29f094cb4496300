import { WorkerError } from "@gen/domain";
import { attemptWindowEndsAt, claimAttempt, enqueueWebhookAttempt, workerFailure, type HandOffFirstAttempt, type OpenAttempt } from "@gen/webhook-delivery";
import type { DeliveryDeps } from "./delivery-deps.ts";
import { routeToLane, type HeldSlot } from "./host-gate.ts";
import { recordResult, runAttempt, type Run } from "./process-delivery.ts";

/** The hand-off of attempt 1 that runs the attempt in this process when it can (see createInlineAttempts). */
export interface InlineAttempts {
  handOff: HandOffFirstAttempt;
  /** Stops running attempts here (later hand-offs are queued) and waits for the ones running. */
  close(): Promise<void>;
}

/**
 * Attempt 1 of a task that just became terminal, run right here instead of through a BullMQ job:
 * the routed hand-off takes the receiver host's ticket as before, and when it is granted the attempt
 * is claimed, rendered, sent and finished in this process, with no job, no pickup and no decision
 * read (the caller has just committed the terminal state; the claim is conditional on `pending`, so
 * a duplicate job from the reconciler still cannot send twice). It runs after the hand-off returns,
 * tracked here, so a slow receiver never holds the caller (a generation job's slot) for its timeout.
 *
 * Queued as before instead: no ticket (the host is at its cap: parked; slow: the slow lane), Redis
 * trouble with the tickets, `bound` attempts already running here (a dead receiver must not eat the
 * process), or closing. A claim that fails hands the attempt to a job, ticket still held (the job asks
 * again under the same id). The process dying mid-attempt leaves what a dead job leaves: a `pending`
 * delivery with no job (the reconciler enqueues attempt 1) or an open attempt (the reconciler records
 * `attempt_lost` and the schedule goes on).
 */
export function createInlineAttempts(deps: DeliveryDeps, bound: number): InlineAttempts {
  const running = new Set<Promise<void>>();
  let closing = false;

  const start = (first: FirstAttempt, slot: HeldSlot): boolean => {
    if (closing || running.size >= bound) return false;
    const run: Promise<void> = runFirstAttempt(deps, first, slot)
      .catch((error: unknown) => {
        deps.logger.error("inline webhook attempt failed; the reconciler repairs it (attempt 1 enqueued, or an open attempt recorded lost)", {
          task_id: first.taskId,
          err: error,
        });
      })
      .finally(() => running.delete(run));
    running.add(run);
    return true;
  };

  return {
    handOff(taskId, url, finishedAt) {
      const windowEndsAt = attemptWindowEndsAt(1, finishedAt, finishedAt, deps.config);
      return routeToLane(deps, "main", taskId, 1, url, windowEndsAt, (slot) => start({ taskId, url, finishedAt, windowEndsAt }, slot));
    },
    async close() {
      closing = true;
      while (running.size > 0) await Promise.all(running);
    },
  };
}

interface FirstAttempt {
  taskId: string;
  url: string;
  finishedAt: Date;
  windowEndsAt: Date;
}

/** The job path's steps from the claim on (process-delivery.ts), with what the caller knows in place of the decision read. */
async function runFirstAttempt(deps: DeliveryDeps, first: FirstAttempt, slot: HeldSlot): Promise<void> {
  const { taskId, url, finishedAt, windowEndsAt } = first;
  let claim;
  try {
    claim = await claimAttempt(deps.db, taskId, 1, deps.now());
  } catch (error) {
    deps.logger.warn("inline webhook attempt could not claim; queued instead", { task_id: taskId, err: error });
    await enqueueWebhookAttempt(deps.webhookQueue, taskId, 1, 0);
    return;
  }
  if (!claim) {
    slot.release(workerFailure(WorkerError.StaleClaim));
    return;
  }
  const manual = claim.requestedBy !== null;
  const open: OpenAttempt = { taskId, attempt: 1, manual, attemptId: claim.id, startedAt: claim.startedAt, taskFinishedAt: finishedAt };
  const run: Run = { kind: "run", url, manual, dueAt: finishedAt, windowEndsAt, taskFinishedAt: finishedAt };
  const result = await runAttempt(deps, open, claim, run, slot);
  await recordResult(deps, open, claim, result);
}
