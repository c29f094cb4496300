import type { RedisClient } from "./create-redis.ts";

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
 * The same scripts say whether the host "keeps timing out" (this many timeouts in a row), which
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

// Shared tail of every script: while the host has room, the oldest waiter gets a ticket.
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

// KEYS: tickets, timeouts, waiting. ARGV: now, lease ms, cap, ticket, lane, slow threshold, mode
// ("0" ask, "1" park: the job is delayed, "2" wait: the job stays active in its worker), waiting-list
// memory ms. Returns {status, promoted...}: 1 granted, 2 slow, 0 full, 3 parked (in the waiting list).
// A waiter that parks after waiting keeps its place (its score) in the list.
// From the main lane a host is slow after that many timeouts in a row, or when it is at its cap with a
// timeout behind it. (Not "an attempt running for a while": under CPU load a healthy host's POST can
// take a second, and it must not be sent to the slow lane for that.) Waiters are older than the
// caller, so they are promoted before the caller may take a free ticket.
const ACQUIRE = `${PROMOTE}
local now = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
local ticket = ARGV[4]
local member = ARGV[5] .. '|' .. ticket
local main = ARGV[5] == 'main'
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local waited = redis.call('ZSCORE', KEYS[3], member)
redis.call('ZREM', KEYS[3], member)
local timeouts = tonumber(redis.call('GET', KEYS[2]) or '0')
if main and timeouts >= tonumber(ARGV[6]) then
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
if main and timeouts > 0 and ARGV[7] ~= '1' then
  out[1] = 2
  return out
end
if ARGV[7] ~= '0' then
  -- First come, first served, also within one millisecond (equal scores would sort by name).
  local score = now
  local tail = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
  if waited then score = tonumber(waited)
  elseif tail[2] and tonumber(tail[2]) >= now then score = tonumber(tail[2]) + 0.001 end
  redis.call('ZADD', KEYS[3], 'NX', score, member)
  redis.call('PEXPIRE', KEYS[3], ARGV[8])
  out[1] = 3
end
return out`;

// KEYS: tickets, timeouts, waiting. ARGV: ticket, "timeout" | "answered" | "other" | "forget",
// counter ttl ms, now, lease ms, cap. Frees the ticket (and, for "forget", the attempt's place in
// the waiting list of either lane) and returns the promoted waiters.
const RELEASE = `${PROMOTE}
local ticket = ARGV[1]
redis.call('ZREM', KEYS[1], ticket)
if ARGV[2] == 'timeout' then
  redis.call('INCR', KEYS[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
elseif ARGV[2] == 'answered' then
  redis.call('DEL', KEYS[2])
elseif ARGV[2] == 'forget' then
  redis.call('ZREM', KEYS[3], 'main|' .. ticket, 'slow|' .. ticket)
end
local now = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return promote({}, now, tonumber(ARGV[5]), tonumber(ARGV[6]))`;

interface HostSlotCommands {
  hostSlotAcquire(
    tickets: string,
    timeouts: string,
    waiting: string,
    now: number,
    leaseMs: number,
    cap: number,
    ticket: string,
    lane: string,
    threshold: number,
    park: string,
    waitMs: number,
  ): Promise<(number | string)[]>;
  hostSlotRelease(
    tickets: string,
    timeouts: string,
    waiting: string,
    ticket: string,
    outcome: string,
    ttlMs: number,
    now: number,
    leaseMs: number,
    cap: number,
  ): Promise<string[]>;
}

export interface HostSlots {
  /**
   * One round trip: a ticket for `ticket` (an attempt's job id), or why not. With `park`, an
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

const parseMember = (member: string): Promoted => {
  const bar = member.indexOf("|");
  return { lane: member.slice(0, bar) === "slow" ? "slow" : "main", ticket: member.slice(bar + 1) };
};

const STATUS: Record<number, HostSlot> = { 0: "full", 1: "granted", 2: "slow", 3: "parked" };

export function createHostSlots(redis: RedisClient, options: HostSlotOptions): HostSlots {
  const commands = redis as unknown as RedisClient & HostSlotCommands;
  if (typeof commands.hostSlotAcquire !== "function") {
    redis.defineCommand("hostSlotAcquire", { numberOfKeys: 3, lua: ACQUIRE });
    redis.defineCommand("hostSlotRelease", { numberOfKeys: 3, lua: RELEASE });
  }
  // A host's keys in one cluster slot: QUEUE_PREFIX is a hash tag on a cluster (its tag wins over
  // the host's braces), and the braces keep them together under any other prefix.
  const keys = (host: string) =>
    [
      `${options.prefix}:webhook-host:{${host}}:tickets`,
      `${options.prefix}:webhook-host:{${host}}:timeouts`,
      `${options.prefix}:webhook-host:{${host}}:waiting`,
    ] as const;
  return {
    async acquire(host, ticket, lane, park = false) {
      const [tickets, timeouts, waiting] = keys(host);
      const [status, ...promoted] = await commands.hostSlotAcquire(
        tickets,
        timeouts,
        waiting,
        Date.now(),
        options.leaseMs,
        options.cap,
        ticket,
        lane,
        SLOW_HOST_TIMEOUTS,
        park === "wait" ? "2" : park ? "1" : "0",
        options.waitMemoryMs,
      );
      return { slot: STATUS[Number(status)] ?? "full", promoted: promoted.map((member) => parseMember(String(member))) };
    },
    async release(host, ticket, outcome) {
      const [tickets, timeouts, waiting] = keys(host);
      const promoted = await commands.hostSlotRelease(
        tickets,
        timeouts,
        waiting,
        ticket,
        outcome,
        options.slowMemoryMs,
        Date.now(),
        options.leaseMs,
        options.cap,
      );
      return promoted.map(parseMember);
    },
  };
}
