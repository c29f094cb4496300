import type { Queue } from "bullmq";
import type { FirstClaim, FirstClaimRequest, TaskForBody } from "@gen/db";
import type { Logger } from "@gen/logger";
import { withDeadline, type WebhookJobData } from "@gen/queues";
import { claimedWithSettlement, firstClaimRequest, type ClaimedAttempt } from "./claim-attempt.ts";
import { attemptWindowEndsAt, type Schedule } from "./delivery-schedule.ts";
import { enqueueWebhookAttempt } from "./enqueue-webhook-attempt.ts";

/**
 * Hands off attempt 1 of a task that just became terminal: the worker's runs it in the same process
 * when its receiver has a ticket free (apps/worker/src/delivery/inline-attempt.ts), else queues it.
 * `customer`: the task's user, whose attempts are counted together whatever their hosts.
 */
export type HandOffFirstAttempt = (taskId: string, url: string, customer: string, finishedAt: Date) => Promise<void>;

/** What the prepare step took for attempt 1 before the task was terminal: its receiver host's ticket. */
export interface HeldHandOff {
  /** Whether attempt 1 may be claimed in the settlement's statement: it will then run in this process, whatever its load. */
  claimFirst: boolean;
  /**
   * The task is terminal: runs (or queues) attempt 1 with the ticket held, no ticket round trip
   * left; with `claimed` (the settlement claimed it), from the claim on, no round trip at all.
   */
  handOff(finishedAt: Date, claimed?: ClaimedAttempt): Promise<void>;
  /** The task was not settled by this caller: frees the ticket (not counted as a timeout). */
  giveBack(): Promise<void>;
}

/**
 * Asks, before the settlement, for attempt 1's receiver ticket, only if one is free now (no waiting
 * list, no job: either would act before the task is terminal). Undefined: nothing held, the
 * hand-off after the commit routes the attempt as usual.
 */
export type PrepareFirstAttempt = (taskId: string, url: string, customer: string) => Promise<HeldHandOff | undefined>;

/** Enqueues an attempt routed by its receiver host's (and customer's) tickets (the worker's host gate). */
export type RouteAttempt = (taskId: string, attempt: number, url: string, customer: string, windowEndsAt: Date) => Promise<void>;

/**
 * The hand-off of attempt 1 through `route`, with attempt 1's window: the worker routes it by its
 * receiver's tickets before it is queued, so one customer's 1,000 finishing tasks to a dead
 * endpoint never sit in the main queue in front of everyone else's.
 */
export function firstAttemptHandOff(route: RouteAttempt, schedule: Schedule): HandOffFirstAttempt {
  return (taskId, url, customer, finishedAt) => route(taskId, 1, url, customer, attemptWindowEndsAt(1, finishedAt, finishedAt, schedule));
}

export interface HandOffDeps {
  webhookQueue: Queue<WebhookJobData>;
  /** The routed hand-off (inline when it can be), where the process has host tickets and a sender; absent: a plain enqueue. */
  handOffWebhook?: HandOffFirstAttempt;
  /** Its prepare step (the generation worker's), taking the ticket alongside the settlement; absent: nothing is prepared. */
  prepareHandOff?: PrepareFirstAttempt;
  logger: Logger;
}

type HandedOffTask = { id: string; userId: string; webhookUrl: string | null; finishedAt: Date | null };
/** A settled task as settleTask returns it, with the folded claim's answer when one was asked for. */
type SettledTask = HandedOffTask & TaskForBody & { firstClaim?: FirstClaim | null };

/**
 * After a task is terminal (finished by the worker or cancelled in the gateway), its `pending`
 * delivery gets attempt 1. A failure here is logged, not thrown: the task result is already
 * committed, and the delivery reconciler enqueues pending deliveries of terminal tasks that have
 * no job.
 */
export async function handOffWebhook(deps: HandOffDeps, task: HandedOffTask): Promise<void> {
  await handOff(deps, task, undefined);
}

async function handOff(deps: HandOffDeps, task: HandedOffTask, held: HeldHandOff | undefined, claimed?: ClaimedAttempt): Promise<void> {
  if (task.webhookUrl === null) return;
  try {
    if (held && task.finishedAt) await held.handOff(task.finishedAt, claimed);
    else if (deps.handOffWebhook && task.finishedAt) await deps.handOffWebhook(task.id, task.webhookUrl, task.userId, task.finishedAt);
    else await enqueueWebhookAttempt(deps.webhookQueue, task.id, 1, 0);
  } catch (error) {
    deps.logger.error("webhook hand-off failed; the reconciler will enqueue it", { task_id: task.id, err: error });
  }
}

/** The hand-off of a task about to be settled, its ticket asked for meanwhile (prepareHandOff). */
export interface PreparedHandOff {
  /**
   * Waits for the ticket, TICKET_WAIT_MS at most; with one held by then (and the attempt able to run
   * here), attempt 1's claim for the settlement to make in its statement (settleTask's
   * `claimFirst`), else undefined. Never throws.
   */
  claimFirst(): Promise<FirstClaimRequest | undefined>;
  /** This caller settled the task: hands off attempt 1 (as handOffWebhook, with the ticket and the claim if taken). Never throws. */
  settled(task: SettledTask): Promise<void>;
  /** The settlement wrote nothing or failed: gives the ticket back. Never throws. */
  abandoned(): Promise<void>;
}

/**
 * Starts the hand-off of attempt 1 before the terminal statement: the receiver's ticket is taken now
 * if one is free, and with it attempt 1 is claimed by the terminal statement itself (`claimFirst`),
 * so that after the commit the attempt is rendered and sent with no round trip before the POST (the
 * generation worker's finish). The caller then says whether it settled the task; every path is
 * logged, not thrown, as in handOffWebhook.
 */
export function prepareHandOff(deps: HandOffDeps, task: { id: string; userId: string; webhookUrl: string | null }): PreparedHandOff {
  const asking = task.webhookUrl !== null && deps.prepareHandOff !== undefined;
  const held: Promise<HeldHandOff | undefined> = asking
    ? deps.prepareHandOff!(task.id, task.webhookUrl!, task.userId).catch((error: unknown) => {
        deps.logger.warn("could not take a webhook ticket before the settlement; the hand-off asks again", { task_id: task.id, err: error });
        return undefined;
      })
    : Promise.resolve(undefined);
  // Asked for once: its id is the attempt log row's, which the settlement writes.
  // Past the wait the settlement goes ahead without the claim (the ticket, if it comes, still serves the hand-off).
  const claim = asking
    ? withDeadline(
        held.then((ticket) => (ticket?.claimFirst ? firstClaimRequest() : undefined)),
        TICKET_WAIT_MS,
        "webhook ticket",
      ).catch(() => undefined)
    : Promise.resolve(undefined);
  return {
    claimFirst: () => claim,
    async settled(settled) {
      const [ticket, request] = await Promise.all([held, claim]);
      // A task without a finish time is not one this caller settled; its ticket is not used.
      if (ticket && !settled.finishedAt) await giveBack(deps, task.id, ticket);
      await handOff(deps, settled, ticket, (request && claimedWithSettlement(request, settled)) ?? undefined);
    },
    async abandoned() {
      const ticket = await held;
      if (ticket) await giveBack(deps, task.id, ticket);
    },
  };
}

/**
 * How long the settlement waits for the ticket before it goes ahead without claiming: the ticket is
 * one Redis round trip (under a millisecond), but a stalled or unreachable Redis (the worker's
 * connection queues commands while it reconnects) must not hold a task's terminal commit. A ticket
 * that comes later is still used by the hand-off after the commit.
 */
const TICKET_WAIT_MS = 25;

async function giveBack(deps: HandOffDeps, taskId: string, ticket: HeldHandOff): Promise<void> {
  await ticket
    .giveBack()
    .catch((error: unknown) => deps.logger.warn("could not give a webhook ticket back; its lease runs out", { task_id: taskId, err: error }));
}
