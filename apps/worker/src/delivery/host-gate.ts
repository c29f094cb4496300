import { DelayedError, Job } from "bullmq";
import { WireError } from "@gen/domain";
import { webhookJobId, type HostSlotAnswer, type HostSlots, type Lane, type Promoted, type WebhookJobData } from "@gen/queues";
import { enqueueWebhookAttempt, ensureAttemptJob, type AttemptResult } from "@gen/webhook-delivery";
import type { DeliveryDeps } from "./delivery-deps.ts";

/** A ticket held for one attempt; `release` is called once the attempt is over. */
export interface HeldSlot {
  release(result: AttemptResult): void;
}

export type GateDeps = Pick<DeliveryDeps, "hostSlots" | "webhookQueue" | "slowQueue" | "logger" | "config" | "now">;

const NO_SLOT: HeldSlot = { release: () => undefined };
// One freed ticket can meet waiters whose jobs already ended (run at their fallback time, removed):
// each is handed the ticket back and the next is tried, up to this many per call.
const MAX_PROMOTIONS = 64;

/**
 * Whom an attempt's tickets are counted under: its receiver (host and port, lower case; its
 * registrable domain is derived from it) and its customer (the task's user), so that a customer
 * giving each task a host name of its own still meets a cap and a slow lane.
 */
interface Receiver {
  host: string;
  customer: string;
}

/** The receiver of `url` for `customer`; null if the URL is unparsable. */
function receiverOf(url: string, customer: string): Receiver | null {
  try {
    const host = new URL(url).host.toLowerCase();
    return host ? { host, customer } : null;
  } catch {
    return null;
  }
}

/**
 * When a parked attempt runs if no ticket reaches it: the first moment it can no longer finish
 * inside its window, so that run records `stale_claim` without sending (and without a ticket).
 */
function parkedUntil(windowEndsAt: Date, deps: Pick<DeliveryDeps, "config">): number {
  return windowEndsAt.getTime() - deps.config.webhookTimeoutMs + 1;
}

/**
 * Asks for a ticket of the attempt's receiver host, counted for its customer too (one Redis round
 * trip). Granted: the attempt goes on. At the host's cap: the attempt joins the host's waiting list
 * and first waits in its worker for a ticket this process frees (LOCAL_WAIT_MS); none by then: the
 * job is parked, i.e. delayed until the end of its window, keeping its place in the list, and a
 * freed ticket promotes it; its worker slot is free meanwhile (throws DelayedError, as BullMQ
 * wants). A host that keeps timing out (or its customer or registrable domain, or a customer at its
 * cap), seen from the main lane: the attempt moves to the slow lane and this job ends. Redis trouble
 * here does not stop delivery: the attempt runs without a ticket (logged).
 */
export async function enterHostGate(
  deps: GateDeps,
  job: Job<WebhookJobData>,
  token: string | undefined,
  url: string,
  customer: string,
  lane: Lane,
  windowEndsAt: Date,
): Promise<HeldSlot | "moved"> {
  const slots = deps.hostSlots;
  const to = receiverOf(url, customer);
  if (!slots || to === null || token === undefined || job.id === undefined) return NO_SLOT;
  const ticket = job.id;
  const waitMs = localWaitMs(deps, slots, to.host, windowEndsAt);
  try {
    const first = await slots.acquire(to.host, ticket, lane, waitMs > 0 ? "wait" : false, customer);
    void promoteWaiters(deps, to, first.promoted);
    if (first.slot === "granted") return heldTicket(deps, to, ticket);
    if (first.slot === "slow") {
      await routeToLane(deps, "slow", job.data.taskId, job.data.attempt, url, customer, windowEndsAt);
      return "moved";
    }
    if (first.slot === "parked" && (await waitHere(slots, to.host, ticket, waitMs))) return heldTicket(deps, to, ticket);
  } catch (error) {
    deps.logger.warn("host ticket check failed; attempt runs without it", { task_id: job.data.taskId, err: error });
    return NO_SLOT;
  }
  await job.moveToDelayed(parkedUntil(windowEndsAt, deps), token);
  await joinWaitingList(deps, to, ticket, lane, () => job.promote());
  throw new DelayedError();
}

// How long an attempt at its host's cap waits in its worker (job active, in the host's waiting list)
// for a ticket before it parks. A ticket freed in this process is handed over without a Redis call
// (promoteWaiters), so a worker running most of one host's attempts parks none; one freed by another
// worker moves the waiter's job, which fails while it is active, so such a waiter learns of its ticket
// when it parks (its place kept; the park finds the ticket held and runs the job again at once).
const LOCAL_WAIT_MS = 1_000;
// A host's tickets are held this long (from grant to release) until its first releases here tell.
const FIRST_HOLD_MS = 100;
const REMEMBERED_HOSTS = 1_000;

/** This process's view of a host: its attempts waiting here, and how long its tickets are held (moving average). */
interface LocalHost {
  waiters: Map<string, () => void>;
  holdMs: number;
  /** Whether a ticket of the host was released here yet: before that, `holdMs` is a guess. */
  measured: boolean;
  /** The host's tickets this process holds (ticket -> grant time): only their releases serve its hand-off waiters. */
  held: Map<string, number>;
  /** Hand-offs at the host's cap waiting for a ticket this process frees (waitForFreedTicket), oldest first. */
  handOffs: HandOffWaiter[];
}

/** Per HostSlots (one per worker process), per host. */
const localHosts = new WeakMap<HostSlots, Map<string, LocalHost>>();

function localHost(slots: HostSlots, host: string): LocalHost {
  let hosts = localHosts.get(slots);
  if (!hosts) localHosts.set(slots, (hosts = new Map()));
  let local = hosts.get(host);
  if (!local) {
    // Hosts come and go: past this many, the ones nobody waits for here are forgotten.
    if (hosts.size >= REMEMBERED_HOSTS) for (const [name, other] of hosts) if (other.waiters.size === 0 && other.handOffs.length === 0) hosts.delete(name);
    hosts.set(host, (local = { waiters: new Map(), holdMs: FIRST_HOLD_MS, measured: false, held: new Map(), handOffs: [] }));
  }
  return local;
}

/**
 * How long to wait here; 0: park now. A waiter waits only if a ticket should reach it within
 * LOCAL_WAIT_MS, judged from the waiters ahead of it here, the cap and how long the host's tickets
 * are held: a fast host's attempts all wait (none parks), a slow one's park at once but for a few,
 * so it cannot fill the worker's slots with waiters. Not close to the window's end either.
 */
function localWaitMs(deps: GateDeps, slots: HostSlots, host: string, windowEndsAt: Date): number {
  const local = localHost(slots, host);
  const expectedMs = ((local.waiters.size + 1) / deps.config.webhookHostConcurrency) * local.holdMs;
  if (expectedMs > LOCAL_WAIT_MS) return 0;
  return parkedUntil(windowEndsAt, deps) - deps.now().getTime() > 2 * LOCAL_WAIT_MS ? LOCAL_WAIT_MS : 0;
}

/** Resolves true when this process hands the attempt its ticket within `ms`, false otherwise. */
function waitHere(slots: HostSlots, host: string, ticket: string, ms: number): Promise<boolean> {
  const { waiters } = localHost(slots, host);
  return new Promise((resolve) => {
    const done = (granted: boolean) => {
      clearTimeout(timer);
      waiters.delete(ticket);
      resolve(granted);
    };
    const timer = setTimeout(() => done(false), ms);
    waiters.set(ticket, () => done(true));
  });
}

/**
 * Enqueues attempt `attempt` in `lane` routed by its host's tickets, so a queue only holds attempts
 * that can start: with a ticket it runs now; without one it is parked until a ticket frees (at the
 * latest until its window closes); for a host that keeps timing out (or its customer or registrable
 * domain, or a customer at its cap) it goes to the slow lane. Used at the hand-off and when the main
 * lane gives an attempt to the slow lane. Redis trouble with the tickets: the attempt is enqueued to
 * run now and asks at its start. `runHere`, given the granted ticket, may take the attempt to run in
 * this process instead (the inline first attempt); when it declines, the job is queued as before and
 * asks for the ticket again under the same id. `taken`: the attempt's ticket, already held
 * (takeFreeTicket), so nothing is asked. `waitHere`: at the cap of a fast host (tickets held briefly
 * here), offered the chance to wait in this process for a ticket this process frees instead of
 * parking (`waitForFreedTicket`); when it takes it, nothing is enqueued.
 */
export async function routeToLane(
  deps: GateDeps,
  lane: Lane,
  taskId: string,
  attempt: number,
  url: string,
  customer: string,
  windowEndsAt: Date,
  runHere?: (slot: HeldSlot) => boolean,
  taken?: HeldSlot,
  waitHere?: (join: () => FreedTicketWait) => boolean,
): Promise<void> {
  const queue = lane === "slow" && deps.slowQueue ? deps.slowQueue : deps.webhookQueue;
  // The main lane's hand-off adds a new id; a move to the slow lane may meet an ended job of the
  // same id there (a reconciler's re-run), which would swallow a plain add.
  const enqueue = (delayMs: number) =>
    lane === "main" ? enqueueWebhookAttempt(queue, taskId, attempt, delayMs) : ensureAttemptJob(queue, taskId, attempt, delayMs);
  const slots = deps.hostSlots;
  const to = receiverOf(url, customer);
  const ticket = webhookJobId(taskId, attempt);
  // A ticket taken already (takeFreeTicket) is this same ticket: no second round trip for it.
  const first = taken ? TAKEN : slots && to !== null ? await slots.acquire(to.host, ticket, lane, false, customer).catch(() => null) : null;
  if (first === null || first.slot === "granted") {
    if (first !== null && runHere?.(taken ?? heldTicket(deps, to!, ticket))) return;
    await enqueue(0);
    return;
  }
  void promoteWaiters(deps, to!, first.promoted);
  if (first.slot === "slow" && lane === "main") return routeToLane(deps, "slow", taskId, attempt, url, customer, windowEndsAt);
  if (first.slot === "full" && waitHere && handOffMayWait(deps, slots!, to!.host, windowEndsAt) && waitHere(() => waitForFreedTicket(deps, to!, ticket)))
    return;
  await enqueue(Math.max(0, parkedUntil(windowEndsAt, deps) - deps.now().getTime()));
  await joinWaitingList(deps, to!, ticket, lane, async () => (await Job.fromId<WebhookJobData>(queue, ticket))?.promote());
}

const TAKEN: HostSlotAnswer = { slot: "granted", promoted: [] };

// How long a hand-off at its host's cap waits in this process for a ticket this process frees before
// it parks. A ~64 ms stall at 500 tasks/s leaves ~32 hand-offs at a cap-32 host, which then drain at
// cap / hold time (tickets held 40-60 ms on a loaded runner: 530-800/s against 500/s arriving) in
// 100-250 ms; twice that lets the waiters of one stall through without parking any, while a wait
// that runs out costs an attempt no more than this over the parked path (its pickup alone took
// 130-2,000 ms on these machines).
const HAND_OFF_WAIT_MS = 500;

/** A hand-off waiting here for a ticket this process frees (`waitForFreedTicket`). */
interface HandOffWaiter {
  ticket: string;
  /** Its customer: the host's waiters here may be several customers'. */
  customer: string;
  /** Its try-only acquire is out (sent beside a release): the answer settles or keeps it. */
  asking: boolean;
  /** Its time ran out (or it was stopped) while asking: the answer settles it, granted or not. */
  ended: boolean;
  settle(slot: HeldSlot | undefined): void;
}

/** A hand-off's wait in this process: `freed` resolves with its ticket, or undefined when the wait ends without one. */
export interface FreedTicketWait {
  freed: Promise<HeldSlot | undefined>;
  /** Ends the wait now (closing); a try-only acquire already out still hands over a ticket it gets. */
  stop(): void;
}

/**
 * Whether a hand-off at its host's cap should wait here rather than park: only for a host whose
 * tickets this process has seen come back (a host it never heard from, or a hanging one, parks at
 * once) and holds some of now (only their releases serve a waiter here), when the waiters ahead of it
 * here should all be served within HAND_OFF_WAIT_MS by those tickets at their moving-average hold
 * time, and with its window far enough off.
 */
function handOffMayWait(deps: GateDeps, slots: HostSlots, host: string, windowEndsAt: Date): boolean {
  const local = localHost(slots, host);
  if (!local.measured) return false;
  const held = heldHere(local, deps);
  if (held === 0 || ((local.handOffs.length + 1) / held) * local.holdMs > HAND_OFF_WAIT_MS) return false;
  return parkedUntil(windowEndsAt, deps) - deps.now().getTime() > 2 * HAND_OFF_WAIT_MS;
}

/**
 * The host's tickets held here. One held past the receiver's timeout is forgotten: its POST is about
 * to time out, or the ticket went to a job elsewhere (a claim that failed, a run declined past the
 * bound) whose release this process never sees.
 */
function heldHere(local: LocalHost, deps: GateDeps): number {
  const stale = performance.now() - deps.config.webhookTimeoutMs;
  for (const [ticket, grantedAt] of local.held) {
    if (grantedAt > stale) break;
    local.held.delete(ticket);
  }
  return local.held.size;
}

/**
 * Joins this process's FIFO of hand-offs waiting for a ticket of `host`. Not the host's waiting list
 * in Redis: a ticket freed by another process goes to the parked attempts there (or stays free), never
 * to a waiter here, so no waiter holds a place the fleet could serve. Each ticket this process frees
 * (`freeTicket`) sends, in the same gathered script and right after the release, a try-only acquire
 * for the oldest waiter not already asking: the release has promoted the parked attempts first, so the
 * waiter gets the ticket only if room remains (the cap holds, and parked attempts keep their turn). No
 * round trip of its own. The wait ends after HAND_OFF_WAIT_MS with nothing (the caller parks).
 */
function waitForFreedTicket(deps: GateDeps, to: Receiver, ticket: string): FreedTicketWait {
  const local = localHost(deps.hostSlots!, to.host);
  let resolve!: (slot: HeldSlot | undefined) => void;
  const freed = new Promise<HeldSlot | undefined>((done) => (resolve = done));
  let settled = false;
  const waiter: HandOffWaiter = {
    ticket,
    customer: to.customer,
    asking: false,
    ended: false,
    settle(slot) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      local.handOffs.splice(local.handOffs.indexOf(waiter), 1);
      resolve(slot);
    },
  };
  const end = () => {
    if (waiter.asking) waiter.ended = true;
    else waiter.settle(undefined);
  };
  const timer = setTimeout(end, HAND_OFF_WAIT_MS);
  local.handOffs.push(waiter);
  return { freed, stop: end };
}

/**
 * Asks, beside a release just sent for `host` (same turn: the same script, after it), for the ticket
 * of this process's oldest hand-off waiting for one and not already asking. Granted: the waiter has
 * it. Full: it waits on (or, its time up, ends). Slow or Redis trouble: its wait ends, and its
 * hand-off routes it as usual.
 */
function serveHandOffWaiter(deps: GateDeps, slots: HostSlots, host: string): void {
  const waiter = localHosts
    .get(slots)
    ?.get(host)
    ?.handOffs.find((candidate) => !candidate.asking);
  if (!waiter) return;
  waiter.asking = true;
  const to: Receiver = { host, customer: waiter.customer };
  slots.acquire(host, waiter.ticket, "main", false, waiter.customer).then(
    (answer) => {
      waiter.asking = false;
      void promoteWaiters(deps, to, answer.promoted);
      if (answer.slot === "granted") waiter.settle(heldTicket(deps, to, waiter.ticket));
      else if (answer.slot !== "full" || waiter.ended) waiter.settle(undefined);
    },
    () => {
      waiter.asking = false;
      waiter.settle(undefined);
    },
  );
}

/**
 * Frees a ticket this process held and moves the waiters it promoted; beside the release, the same
 * script offers the ticket to this process's oldest hand-off waiting for one (serveHandOffWaiter).
 */
async function freeTicket(deps: GateDeps, to: Receiver, ticket: string, outcome: "timeout" | "answered" | "other" | "forget"): Promise<void> {
  const slots = deps.hostSlots!;
  const freeing = slots.release(to.host, ticket, outcome, to.customer);
  localHosts.get(slots)?.get(to.host)?.held.delete(ticket);
  serveHandOffWaiter(deps, slots, to.host);
  await promoteWaiters(deps, to, await freeing);
}

/** A ticket taken ahead of its attempt's hand-off (takeFreeTicket). */
export interface TakenTicket {
  /** Passed to routeToLane as `taken`: held by the attempt it routes. */
  slot: HeldSlot;
  /** The attempt will not be handed off by this caller: frees the ticket without counting an outcome. */
  giveBack(): Promise<void>;
}

/**
 * Takes attempt `attempt`'s ticket only if its host has one free now: no waiting list, no job, no
 * slow-lane move (the hand-off's prepare step, before the task is terminal, when a promoted job
 * would find the task still running and skip). Undefined when not granted, or on Redis trouble:
 * the hand-off then routes the attempt as usual. Waiters promoted by the call are moved as always.
 */
export async function takeFreeTicket(deps: GateDeps, taskId: string, attempt: number, url: string, customer: string): Promise<TakenTicket | undefined> {
  const slots = deps.hostSlots;
  const to = receiverOf(url, customer);
  if (!slots || to === null) return undefined;
  const ticket = webhookJobId(taskId, attempt);
  const answer = await slots.acquire(to.host, ticket, "main", false, customer).catch((error: unknown) => {
    deps.logger.warn("host ticket check before the hand-off failed; the hand-off asks again", { task_id: taskId, err: error });
    return null;
  });
  if (answer === null) return undefined;
  void promoteWaiters(deps, to, answer.promoted);
  if (answer.slot !== "granted") return undefined;
  return {
    slot: heldTicket(deps, to, ticket),
    async giveBack() {
      // "other": neither an answer nor a timeout of the host; the attempt's places in waiting lists (none of ours) are left alone.
      await freeTicket(deps, to, ticket, "other");
    },
  };
}

/**
 * The second half of parking: the attempt's job is already delayed until its window's end (so a
 * ticket handed to a waiter always finds its job delayed); now it joins the host's waiting list.
 * A ticket freed in between, a host turned slow, or Redis trouble: the job runs now instead (it
 * asks again at its start) rather than at its deadline.
 */
async function joinWaitingList(deps: GateDeps, to: Receiver, ticket: string, lane: Lane, runNow: () => Promise<unknown>): Promise<void> {
  const parked = await deps.hostSlots!.acquire(to.host, ticket, lane, true, to.customer).catch((error: unknown) => {
    deps.logger.warn("could not park a webhook attempt; it runs now", { err: error });
    return null;
  });
  if (parked) void promoteWaiters(deps, to, parked.promoted);
  if (parked?.slot !== "parked") await runNow().catch(() => undefined);
}

/**
 * Moves the jobs of waiters that were handed a ticket to waiting. A waiter whose job no longer waits
 * (it ran at its window's end, or is gone) gives the ticket back, which promotes the next one.
 * Errors are logged: an unpromoted waiter still runs at the end of its window, and the ticket's
 * lease runs out. A waiter's customer ticket is taken when its job asks again, so a ticket given back
 * here is only the host's (released beside `to`'s customer, whose tickets it is not among).
 */
async function promoteWaiters(deps: GateDeps, to: Receiver, promoted: Promoted[]): Promise<void> {
  const slots = deps.hostSlots;
  if (!slots) return;
  const { host } = to;
  const pending = [...promoted];
  try {
    for (let done = 0; pending.length > 0 && done < MAX_PROMOTIONS; done++) {
      const { lane, ticket } = pending.shift()!;
      const waiter = localHosts.get(slots)?.get(host)?.waiters.get(ticket);
      if (waiter) {
        waiter();
        continue;
      }
      const queue = lane === "slow" && deps.slowQueue ? deps.slowQueue : deps.webhookQueue;
      const job = await Job.fromId<WebhookJobData>(queue, ticket);
      if (
        job &&
        (await job.promote().then(
          () => true,
          async () => LIVE.has(await job.getState()),
        ))
      )
        continue;
      const freeing = slots.release(host, ticket, "other", to.customer);
      serveHandOffWaiter(deps, slots, host);
      pending.push(...(await freeing));
    }
  } catch (error) {
    deps.logger.warn("could not promote waiting webhook attempts; they run at the end of their window", { err: error });
  }
}

// A job in one of these states will use (or is using) the ticket it was handed.
const LIVE = new Set(["waiting", "active", "prioritized"]);

/**
 * Frees the ticket and waiting place of an attempt that will not be sent (claimed too late for its
 * window): a parked attempt's ticket must not wait for its lease to run out.
 */
export async function forgetTicket(deps: GateDeps, url: string, customer: string, ticket: string): Promise<void> {
  const slots = deps.hostSlots;
  const to = receiverOf(url, customer);
  if (!slots || to === null) return;
  try {
    await freeTicket(deps, to, ticket, "forget");
  } catch (error) {
    deps.logger.warn("could not free a webhook ticket; its lease runs out", { err: error });
  }
}

function heldTicket(deps: GateDeps, to: Receiver, ticket: string): HeldSlot {
  const slots = deps.hostSlots!;
  const grantedAt = performance.now();
  const { held } = localHost(slots, to.host);
  // Last in grant order (heldHere forgets from the front), also when the ticket was held here already.
  held.delete(ticket);
  held.set(ticket, grantedAt);
  return {
    release(result) {
      const local = localHost(slots, to.host);
      // The first release replaces the guess (FIRST_HOLD_MS): a fast host is known as such at once.
      local.holdMs = local.measured ? 0.8 * local.holdMs + 0.2 * (performance.now() - grantedAt) : performance.now() - grantedAt;
      local.measured = true;
      const outcome = !result.ok && result.lastError === WireError.Timeout ? "timeout" : result.status !== null ? "answered" : "other";
      freeTicket(deps, to, ticket, outcome).catch((error: unknown) => deps.logger.warn("host ticket release failed; its lease runs out", { err: error }));
    },
  };
}
