import { WorkerError } from "@gen/domain";
import { createInlineLease, parseWebhookJobId, webhookJobId, type InlineLease, type RedisClient } from "@gen/queues";
import {
  attemptWindowEndsAt,
  claimAttempt,
  ensureAttemptJob,
  workerFailure,
  type ClaimedAttempt,
  type HandOffFirstAttempt,
  type OpenAttempt,
  type PrepareFirstAttempt,
} from "@gen/webhook-delivery";
import type { DeliveryDeps } from "./delivery-deps.ts";
import { routeToLane, takeFreeTicket, type FreedTicketWait, type HeldSlot, type TakenTicket } from "./host-gate.ts";
import { recordResult, runAttempt, type Run } from "./process-delivery.ts";

/** The hand-off of attempt 1 that runs the attempt in this process when it can (see createInlineAttempts). */
export interface InlineAttempts {
  handOff: HandOffFirstAttempt;
  /** Its prepare step: the receiver's ticket taken before the task is terminal, if one is free now. */
  prepare: PrepareFirstAttempt;
  /** Stops running attempts here (later hand-offs are queued), waits for the ones running, then drops the lease. */
  close(): Promise<void>;
}

export interface InlineAttemptOptions {
  /** Inline attempts running at once in this process, at most; past it hand-offs are queued. Hand-offs waiting for a ticket here: WAITERS_PER_RUNNING x this at most. */
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
 * The generation worker asks for the ticket before its terminal statement (`prepare`, only if one is
 * free: nothing may wait for a ticket or be queued before the task is terminal) and, with it, has
 * that statement claim attempt 1 too: the attempt is registered under the lease while that statement
 * goes out, and after the commit it is rendered and sent at once; it runs here even past `bound` or
 * while closing (a claimed attempt that nobody runs would wait for the lease to lapse). A task it did
 * not settle gives the ticket back.
 *
 * At the cap of a fast host (its tickets come back here quickly), the hand-off waits here for a
 * ticket this process frees (host-gate.ts `waitForFreedTicket`: a per-process FIFO, not the host's
 * waiting list in Redis; each release here offers its ticket to the oldest waiter in the same script,
 * after the parked attempts), up to WAITERS_PER_RUNNING x `bound` waiters. The hand-off returns at
 * once (the generation job's slot is not held); the waiting attempt is registered under the lease, so
 * a death while it waits is taken over by a sweep like a running one. Given a ticket it runs here;
 * its wait over (or closing) it is routed again: run here if a ticket is free by then, else parked.
 *
 * Queued as before instead: no ticket (the host is at its cap and not fast, or no room to wait:
 * parked; slow: the slow lane), Redis trouble with the tickets, `bound` attempts already running here
 * (a dead receiver must not eat the process), or closing. A claim that fails adds the attempt's job to
 * run now, which asks for the ticket again under the same id.
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

  const track = (taskId: string, attempt: Promise<void>): void => {
    const run: Promise<void> = attempt
      .catch((error: unknown) => {
        deps.logger.error("inline webhook attempt failed; its job or the reconciler repairs it", { task_id: taskId, err: error });
      })
      .finally(() => running.delete(run));
    running.add(run);
  };
  const start = (first: FirstAttempt, slot: HeldSlot, registered?: Registration): boolean => {
    if (closing || running.size >= options.bound) return false;
    track(first.taskId, runFirstAttempt(deps, first, slot, lease, registered ?? register(deps, lease, first.taskId)));
    return true;
  };
  // Hand-offs waiting here for a ticket this process frees, with what settles once each wait is over.
  const waiting = new Map<FreedTicketWait, Promise<void>>();
  const wait = (first: FirstAttempt, join: () => FreedTicketWait): boolean => {
    if (closing || waiting.size >= WAITERS_PER_RUNNING * options.bound) return false;
    const waited = join();
    // Under the lease while it waits (the SADD goes out meanwhile): a death here is swept, and the attempt's job run.
    const registered = register(deps, lease, first.taskId);
    const over = waited.freed
      .then(async (slot) => {
        // With the ticket: run here (queued to run now if this process cannot). Without: asked again, run here or parked.
        let ranHere = false;
        try {
          await routeToLane(
            deps,
            "main",
            first.taskId,
            1,
            first.url,
            first.customer,
            first.windowEndsAt,
            (held) => (ranHere = start(first, held, registered)),
            slot,
          );
        } finally {
          if (!ranHere) void unregister(lease, first.taskId, registered);
        }
      })
      .catch((error: unknown) => {
        deps.logger.error("webhook hand-off after a wait failed; the reconciler will enqueue it", { task_id: first.taskId, err: error });
      })
      .finally(() => waiting.delete(waited));
    waiting.set(waited, over);
    return true;
  };

  const handOff = async (
    taskId: string,
    url: string,
    customer: string,
    finishedAt: Date,
    taken?: HeldSlot,
    claimed?: ClaimedAttempt,
    registered?: Registration,
  ): Promise<void> => {
    const windowEndsAt = attemptWindowEndsAt(1, finishedAt, finishedAt, deps.config);
    if (taken && claimed) {
      track(
        taskId,
        runClaimedAttempt(deps, { taskId, url, customer, finishedAt, windowEndsAt }, taken, claimed, lease, registered ?? register(deps, lease, taskId)),
      );
      return;
    }
    // Not claimed by the settlement: a run here keeps the registration; an attempt queued has its job instead.
    const first = { taskId, url, customer, finishedAt, windowEndsAt };
    let ranHere = false;
    try {
      await routeToLane(
        deps,
        "main",
        taskId,
        1,
        url,
        customer,
        windowEndsAt,
        (slot) => (ranHere = start(first, slot, registered)),
        taken,
        // Only a hand-off with nothing held and nothing registered reaches the cap (the prepare step gives its registration back when no ticket came).
        (join) => wait(first, join),
      );
    } finally {
      if (registered && !ranHere) void unregister(lease, taskId, registered);
    }
  };

  return {
    handOff: (taskId, url, customer, finishedAt) => handOff(taskId, url, customer, finishedAt),
    async prepare(taskId, url, customer) {
      const claimFirst = !closing && running.size < options.bound;
      // Under the lease before the settlement's statement (which claims the attempt) goes out, so a
      // death right after its commit is taken over like any other. Sent with the ticket's call, not
      // after its answer: both answers come back together, one wake-up of this process instead of
      // two per task; without a ticket the next beat takes it off again.
      const registered = claimFirst ? register(deps, lease, taskId) : undefined;
      let taken: TakenTicket | undefined;
      try {
        taken = await takeFreeTicket(deps, taskId, 1, url, customer);
      } finally {
        if (!taken && registered) void unregister(lease, taskId, registered);
      }
      if (!taken) return undefined;
      return {
        claimFirst,
        handOff: (finishedAt, claimed) => handOff(taskId, url, customer, finishedAt, taken.slot, claimed, registered),
        async giveBack() {
          if (registered) void unregister(lease, taskId, registered);
          await taken.giveBack();
        },
      };
    },
    async close() {
      closing = true;
      // Waiters end now: each is routed again (parked, or run here if a ticket came), before the running attempts are awaited.
      for (const waited of waiting.keys()) waited.stop();
      await Promise.all(waiting.values());
      while (running.size > 0) await Promise.all(running);
      await lease.close().catch((error: unknown) => deps.logger.warn("could not drop the inline attempts' lease; it runs out", { err: error }));
    },
  };
}

// Waiters per inline attempt the process may run (`bound`): at the default 64, 256 hand-offs, half a
// second of 500 tasks/s to one host; each is a timer, a closure and a lease registration.
const WAITERS_PER_RUNNING = 4;

interface FirstAttempt {
  taskId: string;
  url: string;
  /** The task's user. */
  customer: string;
  finishedAt: Date;
  windowEndsAt: Date;
}

/** Whether the attempt is under the lease (false: Redis trouble, logged; it runs anyway). */
type Registration = Promise<boolean>;

function register(deps: DeliveryDeps, lease: InlineLease, taskId: string): Registration {
  return lease.register(webhookJobId(taskId, 1)).then(
    () => true,
    (error: unknown) => {
      deps.logger.warn("inline webhook attempt runs without its lease", { task_id: taskId, err: error });
      return false;
    },
  );
}

/** Recorded, or handed to the job path: the lease need not cover the attempt any longer. */
async function unregister(lease: InlineLease, taskId: string, registered: Registration): Promise<void> {
  if (await registered) lease.finished(webhookJobId(taskId, 1));
}

/** The job path's steps from the claim on (process-delivery.ts), with what the caller knows in place of the decision read. */
async function runFirstAttempt(deps: DeliveryDeps, first: FirstAttempt, slot: HeldSlot, lease: InlineLease, registered: Registration): Promise<void> {
  const { taskId } = first;
  // The registration (unless the prepare step made it) and the claim go out together: neither waits for the other's round trip.
  const [, claimed] = await Promise.allSettled([registered, claimAttempt(deps.db, taskId, 1, deps.now())]);
  if (claimed.status === "rejected") {
    deps.logger.warn("inline webhook attempt could not claim; its job runs it", { task_id: taskId, err: claimed.reason });
    // The ticket stays held: the job asks for it under the same id.
    await handToJob(deps, webhookJobId(taskId, 1));
    await unregister(lease, taskId, registered);
    return;
  }
  const claim = claimed.value;
  if (!claim) {
    slot.release(workerFailure(WorkerError.StaleClaim));
    await unregister(lease, taskId, registered);
    return;
  }
  await runClaimedAttempt(deps, first, slot, claim, lease, registered);
}

/** From the claim on (runFirstAttempt's, or the settlement's): render, send, finish. */
async function runClaimedAttempt(
  deps: DeliveryDeps,
  first: FirstAttempt,
  slot: HeldSlot,
  claim: ClaimedAttempt,
  lease: InlineLease,
  registered: Registration,
): Promise<void> {
  const { taskId, url, customer, finishedAt, windowEndsAt } = first;
  const manual = claim.requestedBy !== null;
  const open: OpenAttempt = { taskId, attempt: 1, manual, attemptId: claim.id, startedAt: claim.startedAt, taskFinishedAt: finishedAt };
  const run: Run = { kind: "run", url, customer, manual, dueAt: finishedAt, windowEndsAt, taskFinishedAt: finishedAt };
  try {
    const result = await runAttempt(deps, open, claim, run, slot);
    await recordResult(deps, open, claim, result);
  } catch (error) {
    // Rendering or the finish statement threw with the attempt open: nothing here will finish it, so
    // its job runs now and records it lost (the schedule goes on) rather than the reconciler, later.
    await handToJob(deps, webhookJobId(taskId, 1));
    throw error;
  } finally {
    await unregister(lease, taskId, registered);
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
