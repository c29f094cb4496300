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
 * routes its attempts to the slow lane.
 */
export const SLOW_HOST_TIMEOUTS = 3;

export type Lane = "main" | "slow";

/**
 * granted: the ticket is held (or was already). slow: the host keeps timing out; from the main lane
 * its attempts go to the slow lane. full: no ticket and not parked. parked: no ticket; the attempt
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
// timeout behind it. (Not "an attempt running for a while": under CPU load a healthy host's POST can
// take a second, and it must not be sent to the slow lane for that.) Waiters are older than the
// caller, so they are promoted before the caller may take a free ticket.
const ACQUIRE = `
local function acquire(now, lease, cap, threshold, wait_ms, ticket, lane, mode)
  local member = lane .. '|' .. ticket
  local main = lane == 'main'
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  local waited = redis.call('ZSCORE', KEYS[3], member)
  redis.call('ZREM', KEYS[3], member)
  local timeouts = tonumber(redis.call('GET', KEYS[2]) or '0')
  if main and timeouts >= threshold then
    redis.call('ZREM', KEYS[1], ticket)
    return promote({2}, now, lease, cap)
  end
  if redis.call('ZSCORE', KEYS[1], ticket) then
    redis.call('ZADD', KEYS[1], now + lease, ticket)
    return {1}
  end
  local out = promote({0}, now, lease, cap)
  if redis.call('ZCARD', KEYS[1]) < cap then
    redis.call('ZADD', KEYS[1], now + lease, ticket)
    redis.call('PEXPIRE', KEYS[1], lease)
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

// outcome: "timeout" | "answered" | "other" | "forget". Frees the ticket (and, for "forget", the
// attempt's place in the waiting list of either lane) and returns the promoted waiters.
const RELEASE = `
local function release(now, lease, cap, counter_ms, ticket, outcome)
  redis.call('ZREM', KEYS[1], ticket)
  if outcome == 'timeout' then
    redis.call('INCR', KEYS[2])
    redis.call('PEXPIRE', KEYS[2], counter_ms)
  elseif outcome == 'answered' then
    redis.call('DEL', KEYS[2])
  elseif outcome == 'forget' then
    redis.call('ZREM', KEYS[3], 'main|' .. ticket, 'slow|' .. ticket)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  return promote({}, now, lease, cap)
end
`;

// The acquires and releases of one host gathered in one event-loop turn, run in arrival order, each
// seeing the one before, exactly as separate calls would; the answer is each call's own, in turn.
// KEYS: tickets, timeouts, waiting (one host: Redis Cluster runs a script in one slot). ARGV: now,
// lease ms, cap, slow threshold, waiting-list memory ms, timeout-counter memory ms, then three per
// call: lane ("main" | "slow": an acquire) or outcome (a release), ticket, acquire's mode.
const CALLS = `${PROMOTE}${ACQUIRE}${RELEASE}
local now = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
local answers = {}
for i = 7, #ARGV, 3 do
  local op = ARGV[i]
  if op == 'main' or op == 'slow' then
    answers[#answers + 1] = acquire(now, lease, cap, tonumber(ARGV[4]), ARGV[5], ARGV[i + 1], op, ARGV[i + 2])
  else
    answers[#answers + 1] = release(now, lease, cap, ARGV[6], ARGV[i + 1], op)
  end
end
return answers`;

type Reply = (number | string)[];

interface HostSlotCommands {
  hostSlotCalls(tickets: string, timeouts: string, waiting: string, ...args: (string | number)[]): Promise<Reply[]>;
}

export interface HostSlots {
  /**
   * A ticket for `ticket` (an attempt's job id), or why not: one round trip, shared by every
   * acquire and release of the same host in this event-loop turn. With `park`, an
   * attempt that gets none joins the host's waiting list (its job must already be delayed); with
   * "wait" it joins it while its job stays active in the worker, which waits for the ticket to be
   * handed to it (the slow-host rule applies as without `park`). A waiter keeps its place when it
   * parks later.
   */
  acquire(host: string, ticket: string, lane: Lane, park?: boolean | "wait"): Promise<HostSlotAnswer>;
  /**
   * Frees the ticket; `timeout` counts towards the slow lane, an answer (any status) clears the
   * count, `forget` also takes the attempt off the waiting list (it will not run in its window).
   */
  release(host: string, ticket: string, outcome: "timeout" | "answered" | "other" | "forget"): Promise<Promoted[]>;
}

export interface HostSlotOptions {
  prefix: string;
  /** WEBHOOK_HOST_CONCURRENCY. */
  cap: number;
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

export function createHostSlots(redis: RedisClient, options: HostSlotOptions): HostSlots {
  const commands = redis as unknown as RedisClient & HostSlotCommands;
  if (typeof commands.hostSlotCalls !== "function") redis.defineCommand("hostSlotCalls", { numberOfKeys: 3, lua: CALLS });
  // A host's keys in one cluster slot: QUEUE_PREFIX is a hash tag on a cluster (its tag wins over
  // the host's braces), and the braces keep them together under any other prefix. So only one
  // host's calls may share a script.
  const send = (host: string, calls: PendingCall[]) => {
    const args: (string | number)[] = [Date.now(), options.leaseMs, options.cap, SLOW_HOST_TIMEOUTS, options.waitMemoryMs, options.slowMemoryMs];
    for (const call of calls) args.push(call.op, call.ticket, call.mode);
    const prefix = `${options.prefix}:webhook-host:{${host}}`;
    commands.hostSlotCalls(`${prefix}:tickets`, `${prefix}:timeouts`, `${prefix}:waiting`, ...args).then(
      (replies) => {
        for (let i = 0; i < calls.length; i++) calls[i]!.answer(replies[i] ?? []);
      },
      // Redis away, a time-out, a script error: every call in the script fails as a lone call would.
      (error: unknown) => {
        for (const call of calls) call.fail(error);
      },
    );
  };
  // The acquires and releases of one turn for the same host are one round trip (a burst of retries
  // of one receiver: one script instead of two per attempt), answered as separate calls in arrival
  // order would be.
  const gather = gatherPerTurn<string, PendingCall>(MAX_CALLS_PER_SCRIPT, send);
  const call = (host: string, op: PendingCall["op"], ticket: string, mode: PendingCall["mode"]) =>
    new Promise<Reply>((answer, fail) => gather(host, { op, ticket, mode, answer, fail }));
  return {
    async acquire(host, ticket, lane, park = false) {
      const [status, ...promoted] = await call(host, lane, ticket, park === "wait" ? "2" : park ? "1" : "0");
      return { slot: STATUS[Number(status)] ?? "full", promoted: promoted.map(parseMember) };
    },
    async release(host, ticket, outcome) {
      return (await call(host, outcome, ticket, "0")).map(parseMember);
    },
  };
}
