import type { Job } from "bullmq";
import { WorkerError } from "@gen/domain";
import type { WebhookJobData } from "@gen/queues";
import {
  attemptWindowEndsAt,
  claimAttempt,
  enqueueWebhookAttempt,
  workerFailure,
  type ClaimedAttempt,
  type HandOffFirstAttempt,
  type OpenAttempt,
  type PrepareFirstAttempt,
} from "@gen/webhook-delivery";
import type { DeliveryDeps } from "./delivery-deps.ts";
import { routeToLane, takeFreeTicket, type HeldSlot } from "./host-gate.ts";
import { recordResult, runAttempt, type Run } from "./process-delivery.ts";

/** The hand-off of attempt 1 that runs the attempt in this process when it can (see createInlineAttempts). */
export interface InlineAttempts {
  handOff: HandOffFirstAttempt;
  /** Its prepare step: the receiver's ticket taken before the task is terminal, if one is free now. */
  prepare: PrepareFirstAttempt;
  /** Stops running attempts here (later hand-offs are queued) and waits for the ones running. */
  close(): Promise<void>;
}

export interface InlineAttemptOptions {
  /** Inline attempts running at once in this process, at most; past it hand-offs are queued. */
  bound: number;
  /** How long the attempt's watchdog job waits without being pushed back before it runs: the delivery lock's duration. */
  watchdogMs: number;
}

/**
 * Attempt 1 of a task that just became terminal, run right here instead of by a delivery worker:
 * the routed hand-off takes the receiver host's ticket as before, and when it is granted the attempt
 * is claimed, rendered, sent and finished in this process, with no pickup and no decision read (the
 * caller has just committed the terminal state; the claim is conditional on `pending`, so a
 * duplicate job cannot send twice). It runs after the hand-off returns, tracked here, so a slow
 * receiver never holds the caller (a generation job's slot) for its timeout.
 *
 * Its job is still added, delayed by `watchdogMs` and pushed back while the attempt runs, then
 * removed: it stands in for the delivery lock. If this process dies (or stalls as long as a lock
 * would lapse), the job runs on any worker: before the claim it runs attempt 1 itself, after it it
 * records `attempt_lost` and the schedule goes on, within about `watchdogMs` as for a dead worker's
 * job. Without the watchdog (Redis lost it) the reconciler repairs both cases, later.
 *
 * The generation worker asks for the ticket before its terminal statement (`prepare`, only if one is
 * free: nothing may wait for a ticket or be queued before the task is terminal) and, with it, has
 * that statement claim attempt 1 too: after the commit the attempt is rendered and sent at once, its
 * watchdog job added meanwhile, and it runs here even past `bound` or while closing (a claimed
 * attempt that nobody runs would wait for its watchdog). A task it did not settle gives the ticket back.
 *
 * Queued as before instead: no ticket (the host is at its cap: parked; slow: the slow lane), Redis
 * trouble with the tickets, `bound` attempts already running here (a dead receiver must not eat the
 * process), or closing. A claim that fails promotes the watchdog job, which asks for the ticket again
 * under the same id.
 */
export function createInlineAttempts(deps: DeliveryDeps, options: InlineAttemptOptions): InlineAttempts {
  const running = new Set<Promise<void>>();
  let closing = false;

  const track = (taskId: string, attempt: Promise<void>): void => {
    const run: Promise<void> = attempt
      .catch((error: unknown) => {
        deps.logger.error("inline webhook attempt failed; its watchdog job or the reconciler repairs it", { task_id: taskId, err: error });
      })
      .finally(() => running.delete(run));
    running.add(run);
  };
  const start = (first: FirstAttempt, slot: HeldSlot): boolean => {
    if (closing || running.size >= options.bound) return false;
    track(first.taskId, runFirstAttempt(deps, first, slot, options.watchdogMs));
    return true;
  };

  const handOff = async (taskId: string, url: string, finishedAt: Date, taken?: HeldSlot, claimed?: ClaimedAttempt): Promise<void> => {
    const windowEndsAt = attemptWindowEndsAt(1, finishedAt, finishedAt, deps.config);
    if (taken && claimed) {
      // The watchdog job is added while the attempt runs: a death before it lands leaves a claimed attempt without a job, which the reconciler records as lost.
      const watchdog = enqueueWebhookAttempt(deps.webhookQueue, taskId, 1, options.watchdogMs).catch((error: unknown) => {
        deps.logger.warn("inline webhook attempt runs without its watchdog job", { task_id: taskId, err: error });
        return undefined;
      });
      track(taskId, runClaimedAttempt(deps, { taskId, url, finishedAt, windowEndsAt }, taken, claimed, watchdog, options.watchdogMs));
      return;
    }
    return routeToLane(deps, "main", taskId, 1, url, windowEndsAt, (slot) => start({ taskId, url, finishedAt, windowEndsAt }, slot), taken);
  };

  return {
    handOff: (taskId, url, finishedAt) => handOff(taskId, url, finishedAt),
    async prepare(taskId, url) {
      const taken = await takeFreeTicket(deps, taskId, 1, url);
      if (!taken) return undefined;
      return {
        claimFirst: !closing && running.size < options.bound,
        handOff: (finishedAt, claimed) => handOff(taskId, url, finishedAt, taken.slot, claimed),
        giveBack: () => taken.giveBack(),
      };
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
async function runFirstAttempt(deps: DeliveryDeps, first: FirstAttempt, slot: HeldSlot, watchdogMs: number): Promise<void> {
  const { taskId } = first;
  // The watchdog and the claim go out together: neither waits for the other's round trip.
  const [added, claimed] = await Promise.allSettled([
    enqueueWebhookAttempt(deps.webhookQueue, taskId, 1, watchdogMs),
    claimAttempt(deps.db, taskId, 1, deps.now()),
  ]);
  const watchdog = added.status === "fulfilled" ? added.value : undefined;
  if (!watchdog) deps.logger.warn("inline webhook attempt runs without its watchdog job", { task_id: taskId, err: (added as PromiseRejectedResult).reason });
  if (claimed.status === "rejected") {
    deps.logger.warn("inline webhook attempt could not claim; its job runs it", { task_id: taskId, err: claimed.reason });
    await watchdog?.promote();
    return;
  }
  const claim = claimed.value;
  if (!claim) {
    slot.release(workerFailure(WorkerError.StaleClaim));
    await dismiss(deps, watchdog);
    return;
  }
  await runClaimedAttempt(deps, first, slot, claim, Promise.resolve(watchdog), watchdogMs);
}

/** From the claim on (runFirstAttempt's, or the settlement's): render, send, finish, with the watchdog job pushed back meanwhile. */
async function runClaimedAttempt(
  deps: DeliveryDeps,
  first: FirstAttempt,
  slot: HeldSlot,
  claim: ClaimedAttempt,
  watchdogAdded: Promise<Job<WebhookJobData> | undefined>,
  watchdogMs: number,
): Promise<void> {
  const { taskId, url, finishedAt, windowEndsAt } = first;
  const manual = claim.requestedBy !== null;
  const open: OpenAttempt = { taskId, attempt: 1, manual, attemptId: claim.id, startedAt: claim.startedAt, taskFinishedAt: finishedAt };
  const run: Run = { kind: "run", url, manual, dueAt: finishedAt, windowEndsAt, taskFinishedAt: finishedAt };
  // Pushed back as BullMQ renews a lock: a quarter of its time, while the attempt runs.
  const renew = setInterval(() => void watchdogAdded.then((watchdog) => watchdog?.changeDelay(watchdogMs)).catch(() => undefined), watchdogMs / 4);
  try {
    const result = await runAttempt(deps, open, claim, run, slot);
    await recordResult(deps, open, claim, result);
  } finally {
    clearInterval(renew);
  }
  await dismiss(deps, await watchdogAdded);
}

/** The attempt is recorded: its watchdog job is not needed (one that already ran, or runs anyway, finds the attempt recorded and skips). */
async function dismiss(deps: DeliveryDeps, watchdog: Job<WebhookJobData> | undefined): Promise<void> {
  await watchdog
    ?.remove()
    .catch((error: unknown) => deps.logger.warn("could not remove an inline attempt's watchdog job; it skips when it runs", { err: error }));
}
