import { getDomain } from "tldts";
import type { RedisClient } from "./create-redis.ts";
import { gatherPerTurn } from "./gather-per-turn.ts";

/**
 * Fleet-wide delivery tickets per receiver host, so one slow or dead receiver cannot hold every
 * worker's delivery slots, nor fill the shared queue with attempts that cannot start.
 *
 * A ticket is an attempt's job id. At most `cap` tickets per host are out at once, counting
 * attempts that are queued to run now as well as running ones: the queues then never hold more
 * than `cap` runnable attempts of one host, and a hanging host's other attempts wait parked (a
 * delayed job plus an entry in the host's waiting list), costing nothing until a ticket frees. Every
 * call that frees a ticket hands it to the oldest waiter in the same script and returns the
 * waiters so promoted; the caller moves their jobs to waiting. Tickets are leases (sorted-set
 * members scored with their expiry), so a worker that dies holding one leaks it only until it
 * runs out; the next call on the host then promotes a waiter into the room.
 *
 * The same script says whether the host "keeps timing out" (this many timeouts in a row), which
 * routes its attempts to the slow lane. Host names cost a customer nothing (a wildcard DNS record
 * gives each task its own), so the script also counts beside the host: the customer's attempts in
 * flight across all its hosts (a fleet-wide cap; past it its attempts from the main lane go to the
 * slow lane, whose few slots are all a customer's hanging receivers can then hold), and runs of
 * timeouts per customer and per registrable domain (the public suffix list's, `tldts`), each
 * routing to the slow lane like the host's own.
 */
export const SLOW_HOST_TIMEOUTS = 3;

export type Lane = "main" | "slow";

/**
 * granted: the ticket is held (or was already). slow: the host (or its customer or registrable
 * domain) keeps timing out, or the customer is at its cap; from the main lane the attempt goes to
 * the slow lane. full: no ticket and not parked. parked: no ticket; the attempt
 * is in the waiting list and is promoted when one frees.
 */
export type HostSlot = "granted" | "slow" | "full" | "parked";

/** A waiter that was given a ticket: its job (id `ticket`) in queue `lane` is to run now. */
export interface Promoted {
  lane: Lane;
  ticket: string;
}

export interface HostSlotAnswer {
  slot: HostSlot;
  promoted: Promoted[];
}

// While the host has room, the oldest waiter gets a ticket: the tail of every call.
// KEYS[1] tickets zset, KEYS[3] waiting zset. Members of the waiting list are "<lane>|<ticket>".
const PROMOTE = `
local function promote(out, now, lease, cap)
  while redis.call('ZCARD', KEYS[1]) < cap do
    local next = redis.call('ZPOPMIN', KEYS[3])
    if #next == 0 then break end
    local member = next[1]
    local ticket = string.sub(member, string.find(member, '|', 1, true) + 1)
    redis.call('ZADD', KEYS[1], now + lease, ticket)
    redis.call('PEXPIRE', KEYS[1], lease)
    out[#out + 1] = member
  end
  return out
end
`;

// mode: "0" ask, "1" park (the job is delayed), "2" wait (the job stays active in its worker).
// Returns {status, promoted...}: 1 granted, 2 slow, 0 full, 3 parked (in the waiting list).
// A waiter that parks after waiting keeps its place (its score) in the list.
// From the main lane a host is slow after that many timeouts in a row, or when it is at its cap with a
// timeout behind it; so is every host of a customer or registrable domain with that many timeouts in
// a row, and every host of a customer at its cap (owner_slow). (Not "an attempt running for a
// while": under CPU load a healthy host's POST can take a second, and it must not be sent to the
// slow lane for that.) Waiters are older than the
// caller, so they are promoted before the caller may take a free ticket.
// KEYS[4] the customer's tickets (zset, leases as the host's), KEYS[5] its timeouts, KEYS[6] the
// registrable domain's timeouts. customer_cap 0: no customer (KEYS[4], KEYS[5] untouched). A promoted
// waiter takes its customer ticket when its job asks again (the "held already" answer).
const OWNER = `
local function owner_slow(now, threshold, customer_cap, ticket)
  if tonumber(redis.call('GET', KEYS[6]) or '0') >= threshold then return true end
  if customer_cap == 0 then return false end
  if tonumber(redis.call('GET', KEYS[5]) or '0') >= threshold then return true end
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
  return redis.call('ZCARD', KEYS[4]) >= customer_cap and not redis.call('ZSCORE', KEYS[4], ticket)
end
local function hold_for_customer(now, lease, customer_cap, ticket)
  if customer_cap == 0 then return end
  redis.call('ZADD', KEYS[4], now + lease, ticket)
  redis.call('PEXPIRE', KEYS[4], lease)
end
`;

const ACQUIRE = `
local function acquire(now, lease, cap, threshold, wait_ms, customer_cap, ticket, lane, mode)
  local member = lane .. '|' .. ticket
  local main = lane == 'main'
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  local waited = redis.call('ZSCORE', KEYS[3], member)
  redis.call('ZREM', KEYS[3], member)
  local timeouts = tonumber(redis.call('GET', KEYS[2]) or '0')
  if main and (timeouts >= threshold or owner_slow(now, threshold, customer_cap, ticket)) then
    redis.call('ZREM', KEYS[1], ticket)
    if customer_cap > 0 then redis.call('ZREM', KEYS[4], ticket) end
    return promote({2}, now, lease, cap)
  end
  if redis.call('ZSCORE', KEYS[1], ticket) then
    redis.call('ZADD', KEYS[1], now + lease, ticket)
    hold_for_customer(now, lease, customer_cap, ticket)
    return {1}
  end
  local out = promote({0}, now, lease, cap)
  if redis.call('ZCARD', KEYS[1]) < cap then
    redis.call('ZADD', KEYS[1], now + lease, ticket)
    redis.call('PEXPIRE', KEYS[1], lease)
    hold_for_customer(now, lease, customer_cap, ticket)
    out[1] = 1
    return out
  end
  if main and timeouts > 0 and mode ~= '1' then
    out[1] = 2
    return out
  end
  if mode ~= '0' then
    -- First come, first served, also within one millisecond (equal scores would sort by name).
    local score = now
    local tail = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
    if waited then score = tonumber(waited)
    elseif tail[2] and tonumber(tail[2]) >= now then score = tonumber(tail[2]) + 0.001 end
    redis.call('ZADD', KEYS[3], 'NX', score, member)
    redis.call('PEXPIRE', KEYS[3], wait_ms)
    out[1] = 3
  end
  return out
end
`;

// outcome: "timeout" | "answered" | "other" | "forget". Frees the ticket (the host's and the
// customer's; and, for "forget", the attempt's place in the waiting list of either lane) and returns
// the promoted waiters. A timeout counts for the host, the customer and the registrable domain; an
// answer ends the run of each.
const RELEASE = `
local function release(now, lease, cap, counter_ms, customer_cap, ticket, outcome)
  redis.call('ZREM', KEYS[1], ticket)
  local counters = {KEYS[2], KEYS[6]}
  if customer_cap > 0 then
    redis.call('ZREM', KEYS[4], ticket)
    counters[3] = KEYS[5]
  end
  if outcome == 'timeout' then
    for _, key in ipairs(counters) do
      redis.call('INCR', key)
      redis.call('PEXPIRE', key, counter_ms)
    end
  elseif outcome == 'answered' then
    redis.call('DEL', unpack(counters))
  elseif outcome == 'forget' then
    redis.call('ZREM', KEYS[3], 'main|' .. ticket, 'slow|' .. ticket)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  return promote({}, now, lease, cap)
end
`;

// The acquires and releases of one host and customer gathered in one event-loop turn, run in arrival
// order, each seeing the one before, exactly as separate calls would; the answer is each call's own,
// in turn. KEYS: the host's tickets, timeouts, waiting; the customer's tickets, timeouts; the
// registrable domain's timeouts (one cluster slot: QUEUE_PREFIX is a hash tag there). ARGV: now,
// lease ms, cap, slow threshold, waiting-list memory ms, timeout-counter memory ms, customer cap (0:
// no customer), then three per call: lane ("main" | "slow": an acquire) or outcome (a release),
// ticket, acquire's mode.
const CALLS = `${PROMOTE}${OWNER}${ACQUIRE}${RELEASE}
local now = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
local customer_cap = tonumber(ARGV[7])
local answers = {}
for i = 8, #ARGV, 3 do
  local op = ARGV[i]
  if op == 'main' or op == 'slow' then
    answers[#answers + 1] = acquire(now, lease, cap, tonumber(ARGV[4]), ARGV[5], customer_cap, ARGV[i + 1], op, ARGV[i + 2])
  else
    answers[#answers + 1] = release(now, lease, cap, ARGV[6], customer_cap, ARGV[i + 1], op)
  end
end
return answers`;

type Reply = (number | string)[];

interface HostSlotCommands {
  hostSlotCalls(
    tickets: string,
    timeouts: string,
    waiting: string,
    customerTickets: string,
    customerTimeouts: string,
    domainTimeouts: string,
    ...args: (string | number)[]
  ): Promise<Reply[]>;
}

export interface HostSlots {
  /**
   * A ticket for `ticket` (an attempt's job id), or why not: one round trip, shared by every
   * acquire and release of the same host in this event-loop turn. With `park`, an
   * attempt that gets none joins the host's waiting list (its job must already be delayed); with
   * "wait" it joins it while its job stays active in the worker, which waits for the ticket to be
   * handed to it (the slow-host rule applies as without `park`). A waiter keeps its place when it
   * parks later. `customer` (the task's user): the attempt also counts against the customer's cap
   * and timeouts; without one, only the host and its registrable domain count.
   */
  acquire(host: string, ticket: string, lane: Lane, park?: boolean | "wait", customer?: string): Promise<HostSlotAnswer>;
  /**
   * Frees the ticket; `timeout` counts towards the slow lane, an answer (any status) clears the
   * count, `forget` also takes the attempt off the waiting list (it will not run in its window).
   * `customer`: the one the ticket was acquired for.
   */
  release(host: string, ticket: string, outcome: "timeout" | "answered" | "other" | "forget", customer?: string): Promise<Promoted[]>;
}

export interface HostSlotOptions {
  prefix: string;
  /** WEBHOOK_HOST_CONCURRENCY. */
  cap: number;
  /** WEBHOOK_CUSTOMER_CONCURRENCY: one customer's attempts in flight, all its hosts together, before the main lane sends them to the slow one. */
  customerCap: number;
  /**
   * Longer than an attempt can legitimately wait in a queue and run: a ticket outliving its worker
   * is freed after this.
   */
  leaseMs: number;
  /** How long a run of timeouts is remembered (a host quiet for this long starts in the main lane again). */
  slowMemoryMs: number;
  /** Longer than any attempt's window: a waiting list nobody touches for this long is dropped. */
  waitMemoryMs: number;
}

const parseMember = (member: string | number): Promoted => {
  const text = String(member);
  const bar = text.indexOf("|");
  return { lane: text.slice(0, bar) === "slow" ? "slow" : "main", ticket: text.slice(bar + 1) };
};

const STATUS: Record<number, HostSlot> = { 0: "full", 1: "granted", 2: "slow", 3: "parked" };

/** One acquire or release waiting for the end of its turn. */
interface PendingCall {
  host: string;
  customer: string | undefined;
  /** An acquire's lane or a release's outcome: the script tells them apart by it. */
  op: Lane | "timeout" | "answered" | "other" | "forget";
  ticket: string;
  mode: "0" | "1" | "2";
  answer(reply: Reply): void;
  fail(error: unknown): void;
}

// Calls per script at most: a script blocks Redis while it runs, and a turn with more calls for one
// host is sent as several scripts in a row (one connection: they run in order).
const MAX_CALLS_PER_SCRIPT = 128;

/**
 * The registrable domain a receiver's timeouts are also counted under: its host name's public suffix
 * plus one label (private suffixes such as a hosting platform's count as suffixes, so two of its
 * customers are two domains). An address or a bare name is its own.
 */
export function registrableDomain(host: string): string {
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d*$/, "");
  return getDomain(name, { allowPrivateDomains: true }) ?? name;
}

export function createHostSlots(redis: RedisClient, options: HostSlotOptions): HostSlots {
  const commands = redis as unknown as RedisClient & HostSlotCommands;
  if (typeof commands.hostSlotCalls !== "function") redis.defineCommand("hostSlotCalls", { numberOfKeys: 6, lua: CALLS });
  // Every key in one cluster slot: QUEUE_PREFIX is a hash tag on a cluster (its tag wins over the
  // braces below). So only one host's (and one customer's) calls may share a script.
  const send = (_key: string, calls: PendingCall[]) => {
    const { host, customer } = calls[0]!;
    const customerCap = customer === undefined ? 0 : options.customerCap;
    const args: (string | number)[] = [Date.now(), options.leaseMs, options.cap, SLOW_HOST_TIMEOUTS, options.waitMemoryMs, options.slowMemoryMs, customerCap];
    for (const call of calls) args.push(call.op, call.ticket, call.mode);
    const prefix = `${options.prefix}:webhook-host:{${host}}`;
    const owner = `${options.prefix}:webhook-customer:{${customer ?? ""}}`;
    const domain = `${options.prefix}:webhook-domain:{${registrableDomain(host)}}`;
    commands
      .hostSlotCalls(`${prefix}:tickets`, `${prefix}:timeouts`, `${prefix}:waiting`, `${owner}:tickets`, `${owner}:timeouts`, `${domain}:timeouts`, ...args)
      .then(
        (replies) => {
          for (let i = 0; i < calls.length; i++) calls[i]!.answer(replies[i] ?? []);
        },
        // Redis away, a time-out, a script error: every call in the script fails as a lone call would.
        (error: unknown) => {
          for (const call of calls) call.fail(error);
        },
      );
  };
  // The acquires and releases of one turn for the same host (and customer) are one round trip (a
  // burst of retries of one receiver: one script instead of two per attempt), answered as separate
  // calls in arrival order would be.
  const gather = gatherPerTurn<string, PendingCall>(MAX_CALLS_PER_SCRIPT, send);
  const call = (host: string, customer: string | undefined, op: PendingCall["op"], ticket: string, mode: PendingCall["mode"]) =>
    new Promise<Reply>((answer, fail) => gather(customer === undefined ? host : `${host} ${customer}`, { host, customer, op, ticket, mode, answer, fail }));
  return {
    async acquire(host, ticket, lane, park = false, customer) {
      const [status, ...promoted] = await call(host, customer, lane, ticket, park === "wait" ? "2" : park ? "1" : "0");
      return { slot: STATUS[Number(status)] ?? "full", promoted: promoted.map(parseMember) };
    },
    async release(host, ticket, outcome, customer) {
      return (await call(host, customer, outcome, ticket, "0")).map(parseMember);
    },
  };
}
