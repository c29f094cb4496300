import { WorkerError } from "@gen/domain";
import { createInlineLease, parseWebhookJobId, webhookJobId, type InlineLease, type RedisClient } from "@gen/queues";
import { attemptWindowEndsAt, claimAttempt, ensureAttemptJob, workerFailure, type HandOffFirstAttempt, type OpenAttempt } from "@gen/webhook-delivery";
import type { DeliveryDeps } from "./delivery-deps.ts";
import { routeToLane, type HeldSlot } from "./host-gate.ts";
import { recordResult, runAttempt, type Run } from "./process-delivery.ts";

/** The hand-off of attempt 1 that runs the attempt in this process when it can (see createInlineAttempts). */
export interface InlineAttempts {
  handOff: HandOffFirstAttempt;
  /** Stops running attempts here (later hand-offs are queued), waits for the ones running, then drops the lease. */
  close(): Promise<void>;
}

export interface InlineAttemptOptions {
  /** Inline attempts running at once in this process, at most; past it hand-offs are queued. */
  bound: number;
  /** How long this process's attempts are safe without a renewal of its lease: the delivery lock's duration. */
  leaseMs: number;
  /** Where the lease lives (the process's blocking connection). */
  redis: RedisClient;
}

/**
 * Attempt 1 of a task that just became terminal, run right here instead of by a delivery worker:
 * the routed hand-off takes the receiver host's ticket as before, and when it is granted the attempt
 * is claimed, rendered, sent and finished in this process, with no pickup and no decision read (the
 * caller has just committed the terminal state; the claim is conditional on `pending`, so a
 * duplicate job cannot send twice). It runs after the hand-off returns, tracked here, so a slow
 * receiver never holds the caller (a generation job's slot) for its timeout.
 *
 * It has no job: it is registered under this process's lease (@gen/queues inline-lease.ts), which
 * stands in for the delivery lock. If this process dies (or stalls as long as a lock would lapse),
 * another process's sweep takes the attempt over and adds its job to run now: before the claim it
 * runs attempt 1 itself, after it it records `attempt_lost` and the schedule goes on, within about
 * `leaseMs` (+ a beat) as for a dead worker's job. Not registered (Redis trouble) or the lease lost
 * with Redis: the reconciler repairs both cases, later.
 *
 * Queued as before instead: no ticket (the host is at its cap: parked; slow: the slow lane), Redis
 * trouble with the tickets, `bound` attempts already running here (a dead receiver must not eat the
 * process), or closing. A claim that fails adds the attempt's job to run now, which asks for the
 * ticket again under the same id.
 */
export function createInlineAttempts(deps: DeliveryDeps, options: InlineAttemptOptions): InlineAttempts {
  const running = new Set<Promise<void>>();
  let closing = false;
  const lease = createInlineLease(options.redis, {
    prefix: deps.config.queuePrefix,
    leaseMs: options.leaseMs,
    takeOver: (attempt) => runAsJob(deps, attempt),
    onError: (error) => deps.logger.warn("inline attempts' lease: Redis trouble renewing, sweeping or taking over; the next beat tries again", { err: error }),
  });

  const start = (first: FirstAttempt, slot: HeldSlot): boolean => {
    if (closing || running.size >= options.bound) return false;
    const run: Promise<void> = runFirstAttempt(deps, first, slot, lease)
      .catch((error: unknown) => {
        deps.logger.error("inline webhook attempt failed; its job or the reconciler repairs it", { task_id: first.taskId, err: error });
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
      await lease.close().catch((error: unknown) => deps.logger.warn("could not drop the inline attempts' lease; it runs out", { err: error }));
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
async function runFirstAttempt(deps: DeliveryDeps, first: FirstAttempt, slot: HeldSlot, lease: InlineLease): Promise<void> {
  const { taskId, url, finishedAt, windowEndsAt } = first;
  const ticket = webhookJobId(taskId, 1);
  // The registration and the claim go out together: neither waits for the other's round trip.
  const [registered, claimed] = await Promise.allSettled([lease.register(ticket), claimAttempt(deps.db, taskId, 1, deps.now())]);
  if (registered.status === "rejected") deps.logger.warn("inline webhook attempt runs without its lease", { task_id: taskId, err: registered.reason });
  // Recorded, or handed to the job path: the lease need not cover it any longer.
  const finished = () => {
    if (registered.status === "fulfilled") lease.finished(ticket);
  };
  if (claimed.status === "rejected") {
    deps.logger.warn("inline webhook attempt could not claim; its job runs it", { task_id: taskId, err: claimed.reason });
    // The ticket stays held: the job asks for it under the same id.
    await handToJob(deps, ticket);
    finished();
    return;
  }
  const claim = claimed.value;
  if (!claim) {
    slot.release(workerFailure(WorkerError.StaleClaim));
    finished();
    return;
  }
  const manual = claim.requestedBy !== null;
  const open: OpenAttempt = { taskId, attempt: 1, manual, attemptId: claim.id, startedAt: claim.startedAt, taskFinishedAt: finishedAt };
  const run: Run = { kind: "run", url, manual, dueAt: finishedAt, windowEndsAt, taskFinishedAt: finishedAt };
  try {
    const result = await runAttempt(deps, open, claim, run, slot);
    await recordResult(deps, open, claim, result);
  } catch (error) {
    // Rendering or the finish statement threw with the attempt open: nothing here will finish it, so
    // its job runs now and records it lost (the schedule goes on) rather than the reconciler, later.
    await handToJob(deps, ticket);
    throw error;
  } finally {
    finished();
  }
}

/**
 * The attempt's job, added to run now (an ended job of the same id is replaced, a live one left as
 * it is): the job path sees what the attempt left.
 */
async function runAsJob(deps: DeliveryDeps, ticket: string): Promise<void> {
  const attempt = parseWebhookJobId(ticket);
  if (attempt) await ensureAttemptJob(deps.webhookQueue, attempt.taskId, attempt.attempt);
}

/** runAsJob from the attempt's own process: a failure is logged, and the reconciler repairs the attempt, later. */
async function handToJob(deps: DeliveryDeps, ticket: string): Promise<void> {
  await runAsJob(deps, ticket).catch((error: unknown) =>
    deps.logger.warn("could not add an inline attempt's job; the reconciler repairs it", { ticket, err: error }),
  );
}
