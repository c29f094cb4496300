import type { RedisClient } from "./create-redis.ts";

/**
 * Fleet-wide delivery slots per receiver host, so one slow or dead receiver cannot hold every
 * worker's delivery slots. Each slot is a lease (a sorted-set member scored with its expiry), so a
 * worker that dies holding slots leaks them only until their leases run out. The same script says
 * whether the host "keeps timing out" (this many timeouts in a row), which routes its attempts to
 * the slow lane.
 */
export const SLOW_HOST_TIMEOUTS = 3;

/** `full` carries how long the host's oldest attempt in flight has been running. */
export type HostSlot = "granted" | "slow" | { full: true; oldestRunningMs: number };

// KEYS: leases zset, timeout counter. ARGV: now ms, lease ms, cap, member, lane ("main"|"slow"),
// slow threshold. From the main lane, a host is "slow" after that many timeouts in a row, or when it
// is at its cap with a timeout behind it: its waiting attempts then leave the main queue instead of
// cycling through it. (Not "an attempt running for a while": under CPU load a healthy host's POST
// can take a second, and it must not be sent to the slow lane for that.)
const ACQUIRE = `
local now = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local main = ARGV[5] == 'main'
local timeouts = tonumber(redis.call('GET', KEYS[2]) or '0')
if main and timeouts >= tonumber(ARGV[6]) then return 2 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  if main then
    if timeouts > 0 then return 2 end
  end
  -- How long the host's oldest attempt in flight has run: a fast receiver's slots free within about
  -- that long, a hanging one's only at its timeout; the caller waits accordingly.
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return -math.max(1, now - (tonumber(oldest[2]) - lease))
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

// KEYS: leases zset, timeout counter. ARGV: member, "timeout" | "answered" | "other", counter ttl ms.
const RELEASE = `
redis.call('ZREM', KEYS[1], ARGV[1])
if ARGV[2] == 'timeout' then
  redis.call('INCR', KEYS[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
elseif ARGV[2] == 'answered' then
  redis.call('DEL', KEYS[2])
end
return 1`;

interface HostSlotCommands {
  hostSlotAcquire(leases: string, timeouts: string, now: number, leaseMs: number, cap: number, member: string, lane: string, threshold: number): Promise<number>;
  hostSlotRelease(leases: string, timeouts: string, member: string, outcome: string, ttlMs: number): Promise<number>;
}

export interface HostSlots {
  /** One round trip: a slot for `member` (an attempt id), or why not. */
  acquire(host: string, member: string, lane: "main" | "slow"): Promise<HostSlot>;
  /** Frees the slot; `timeout` counts towards the slow lane, an answer (any status) clears the count. */
  release(host: string, member: string, outcome: "timeout" | "answered" | "other"): Promise<void>;
}

export interface HostSlotOptions {
  prefix: string;
  /** WEBHOOK_HOST_CONCURRENCY. */
  cap: number;
  /** Longer than an attempt can legitimately take: a lease outliving its worker is freed after this. */
  leaseMs: number;
  /** How long a run of timeouts is remembered (a host quiet for this long starts in the main lane again). */
  slowMemoryMs: number;
}

export function createHostSlots(redis: RedisClient, options: HostSlotOptions): HostSlots {
  const commands = redis as unknown as RedisClient & HostSlotCommands;
  if (typeof commands.hostSlotAcquire !== "function") {
    redis.defineCommand("hostSlotAcquire", { numberOfKeys: 2, lua: ACQUIRE });
    redis.defineCommand("hostSlotRelease", { numberOfKeys: 2, lua: RELEASE });
  }
  // Both keys of a host in one cluster slot: QUEUE_PREFIX is a hash tag on a cluster (its tag wins
  // over the host's braces), and the braces keep them together under any other prefix.
  const keys = (host: string) => [`${options.prefix}:webhook-host:{${host}}:leases`, `${options.prefix}:webhook-host:{${host}}:timeouts`] as const;
  return {
    async acquire(host, member, lane) {
      const [leases, timeouts] = keys(host);
      const answer = await commands.hostSlotAcquire(leases, timeouts, Date.now(), options.leaseMs, options.cap, member, lane, SLOW_HOST_TIMEOUTS);
      if (answer === 1) return "granted";
      if (answer === 2) return "slow";
      return { full: true, oldestRunningMs: -answer };
    },
    async release(host, member, outcome) {
      const [leases, timeouts] = keys(host);
      await commands.hostSlotRelease(leases, timeouts, member, outcome, options.slowMemoryMs);
    },
  };
}
