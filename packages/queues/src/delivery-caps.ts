import type { RedisClient } from "./create-redis.ts";

/**
 * Fleet-wide caps on webhook attempts in flight: per receiver host and per customer (the task's
 * user, all its hosts together: a wildcard DNS record gives a customer as many host names as it
 * likes). One slow or dead receiver, or one customer's many, cannot hold every worker's delivery
 * slots. An attempt over either cap is not run: it is told when its turn comes and asks again then.
 *
 * A count is a sorted set of the attempts in flight (their job ids), each scored with when it took
 * its place: a place is dropped after the hold even if never given back, so a worker that dies
 * mid-attempt leaks it only until then. Beside each count, its pace: how long an attempt holds a
 * place (a moving average of the releases) and the next turn handed out.
 *
 * Turns: a scope at its cap frees a place about every (time an attempt holds a place) / cap, so the
 * attempts it refuses are given turns that far apart, one after the other. A backlog then comes back
 * at the rate the receiver takes it, each attempt about once, instead of every refused attempt
 * asking again at once (a fast receiver's backlog spinning the workers) or backing off ever longer
 * (its cap left idle). The time an attempt holds a place is the larger of the average and the age of
 * the oldest place held, so a receiver that has just started to hang, whose attempts have not ended
 * yet, is paced by how long they have run.
 */
export type CapScope = "host" | "customer";

/** What `take` answered: the place, or the full scope and when to ask again (epoch ms). */
export type CapAnswer = { taken: true } | { taken: false; full: CapScope; turnAt: number };

// KEYS[1] the host's attempts in flight, KEYS[2] the customer's, KEYS[3] and KEYS[4] their paces.
// ARGV: now ms, hold ms, host cap, customer cap, attempt (job id), the attempt's last useful start
// ms. Returns {0, 0} (taken, or held already) or {1 host full | 2 customer full, the turn given}. A
// turn past the attempt's last useful start is not handed out (it would be lost to everyone): the
// attempt is told to come at its last start, which the turns after it do not count.
const TAKE = `
local now = tonumber(ARGV[1])
local hold = tonumber(ARGV[2])
local caps = {tonumber(ARGV[3]), tonumber(ARGV[4])}
for i = 1, 2 do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - hold)
  if not redis.call('ZSCORE', KEYS[i], ARGV[5]) and redis.call('ZCARD', KEYS[i]) >= caps[i] then
    local pace = KEYS[i + 2]
    local oldest = redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')
    local held = math.max(tonumber(redis.call('HGET', pace, 'held') or 0), now - tonumber(oldest[2]))
    local turn = math.max(now, tonumber(redis.call('HGET', pace, 'turn') or 0)) + held / caps[i]
    if turn > tonumber(ARGV[6]) then return {i, tonumber(ARGV[6])} end
    redis.call('HSET', pace, 'turn', turn)
    redis.call('PEXPIRE', pace, hold)
    return {i, math.ceil(turn)}
  end
end
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], now, ARGV[5])
  redis.call('PEXPIRE', KEYS[i], hold)
end
return {0, 0}`;

// KEYS as TAKE's; ARGV: attempt, now ms, hold ms. Gives the place back and folds the time it was
// held into the scope's average (an eighth at a time). One command instead of a MULTI.
const RELEASE = `
local now = tonumber(ARGV[2])
for i = 1, 2 do
  local since = redis.call('ZSCORE', KEYS[i], ARGV[1])
  if since then
    redis.call('ZREM', KEYS[i], ARGV[1])
    local pace = KEYS[i + 2]
    local held = math.max(0, now - tonumber(since))
    local average = tonumber(redis.call('HGET', pace, 'held'))
    if average then held = average + (held - average) / 8 end
    redis.call('HSET', pace, 'held', held)
    redis.call('PEXPIRE', pace, ARGV[3])
  end
end`;

interface CapCommands {
  releaseDeliveryCap(host: string, customer: string, hostPace: string, customerPace: string, attempt: string, now: number, holdMs: number): Promise<unknown>;
  takeDeliveryCap(
    host: string,
    customer: string,
    hostPace: string,
    customerPace: string,
    now: number,
    holdMs: number,
    hostCap: number,
    customerCap: number,
    attempt: string,
    lastStart: number,
  ): Promise<[number, number]>;
}

export interface DeliveryCapOptions {
  prefix: string;
  /** WEBHOOK_HOST_CONCURRENCY. */
  hostCap: number;
  /** WEBHOOK_CUSTOMER_CONCURRENCY. */
  customerCap: number;
  /** Longer than an attempt can run: a place a dead worker held is dropped after this. */
  holdMs: number;
}

export interface DeliveryCaps {
  /**
   * Takes a place for `attempt` under both caps (one round trip), or names the one that is full and
   * the attempt's turn, at the latest `lastStart` (epoch ms; the last moment the attempt may start).
   */
  take(host: string, customer: string, attempt: string, lastStart?: number): Promise<CapAnswer>;
  /** Gives the place back. */
  release(host: string, customer: string, attempt: string): Promise<void>;
  /** The attempts in flight under one scope's cap now (expired places included until the next take). */
  inFlight(scope: CapScope, name: string): Promise<number>;
}

export function createDeliveryCaps(redis: RedisClient, options: DeliveryCapOptions): DeliveryCaps {
  const commands = redis as unknown as RedisClient & CapCommands;
  if (typeof commands.takeDeliveryCap !== "function") {
    redis.defineCommand("takeDeliveryCap", { numberOfKeys: 4, lua: TAKE });
    redis.defineCommand("releaseDeliveryCap", { numberOfKeys: 4, lua: RELEASE });
  }
  // Under QUEUE_PREFIX, which is a hash tag on a cluster: all four keys are in one slot.
  const key = (scope: CapScope, name: string) => `${options.prefix}:webhook-cap:${scope}:${name}`;
  const pace = (scope: CapScope, name: string) => `${options.prefix}:webhook-pace:${scope}:${name}`;
  return {
    async take(host, customer, attempt, lastStart = Number.MAX_SAFE_INTEGER) {
      const [full, turnAt] = await commands.takeDeliveryCap(
        key("host", host),
        key("customer", customer),
        pace("host", host),
        pace("customer", customer),
        Date.now(),
        options.holdMs,
        options.hostCap,
        options.customerCap,
        attempt,
        lastStart,
      );
      if (full === 0) return { taken: true };
      return { taken: false, full: full === 1 ? "host" : "customer", turnAt };
    },
    async release(host, customer, attempt) {
      await commands.releaseDeliveryCap(
        key("host", host),
        key("customer", customer),
        pace("host", host),
        pace("customer", customer),
        attempt,
        Date.now(),
        options.holdMs,
      );
    },
    inFlight: (scope, name) => redis.zcard(key(scope, name)),
  };
}
