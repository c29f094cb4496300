import type { RedisClient } from "./create-redis.ts";

/**
 * Fleet-wide slots for upstream jobs (catalog `maxConcurrency`), per route of a model, with one
 * first-come-first-served waiting list per model.
 *
 * A slot is held by a task id in its route's sorted set, scored with the lease's expiry: every step
 * of the task renews it, and a task whose job is lost for good (a worker and its job gone) gives its
 * slot back when the lease runs out. A task that finds every capped route full joins the model's
 * waiting list (its job parked as delayed, costing no worker slot and no upstream call) and is woken
 * when a slot frees. Waiters hold leases too (renewed each time their job asks again), so a waiter
 * whose job is gone leaves the list instead of standing at its head.
 *
 * Order: a task may take a free slot only if fewer waiters are ahead of it than there are free slots
 * on all the model's capped routes together (a newcomer has every waiter ahead of it). Every call that
 * leaves room returns the waiters at the head of the list (as many as there is room for): the caller
 * wakes their jobs, and each one's claim then finds its place. Waking twice costs nothing; a lost
 * wake-up costs the waiter its safety delay.
 *
 * Keys: the model's waiting list and its waiters' leases, and one slot set per capped route, all
 * tagged with the model's name (on a cluster QUEUE_PREFIX is a hash tag, whose braces win).
 */
const SCRIPT = `
local now = tonumber(ARGV[1])
local op = ARGV[2]
local task = ARGV[3]
local lease = tonumber(ARGV[4])
local index = tonumber(ARGV[5])
local limit = tonumber(ARGV[6])
local routes = #KEYS - 2

-- A key's time to live only ever grows: leases differ from call to call.
local function keep(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end

-- Expired leases are given back first: running jobs lost with their worker, waiters whose job is gone.
for r = 1, routes do redis.call('ZREMRANGEBYSCORE', KEYS[2 + r], '-inf', now) end
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  redis.call('ZREM', KEYS[1], member)
  redis.call('ZREM', KEYS[2], member)
end

local function room()
  local total = 0
  for r = 1, routes do
    local free = tonumber(ARGV[6 + r]) - redis.call('ZCARD', KEYS[2 + r])
    if free > 0 then total = total + free end
  end
  return total
end

local function unhold()
  for r = 1, routes do redis.call('ZREM', KEYS[2 + r], task) end
end

local function hold(r)
  redis.call('ZADD', KEYS[2 + r], now + lease, task)
  keep(KEYS[2 + r], lease)
end

-- The waiters there is room for, after whatever the call did.
local function heads(out)
  local total = math.min(room(), limit)
  if total > 0 then
    for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, total - 1)) do out[#out + 1] = member end
  end
  return out
end

if op == 'claim' then
  if redis.call('ZSCORE', KEYS[2 + index], task) then
    hold(index)
    return {1}
  end
  if redis.call('ZCARD', KEYS[2 + index]) < tonumber(ARGV[6 + index]) then
    local ahead = redis.call('ZRANK', KEYS[1], task) or redis.call('ZCARD', KEYS[1])
    if ahead < room() then
      -- A task holds one slot: moving to this route frees the one it held elsewhere.
      unhold()
      redis.call('ZREM', KEYS[1], task)
      redis.call('ZREM', KEYS[2], task)
      hold(index)
      return heads({1})
    end
  end
  return {0}
end

if op == 'wait' then
  if not redis.call('ZSCORE', KEYS[1], task) then
    -- Scores in microseconds, one apart within a millisecond: first come, first served.
    local score = now * 1000
    local tail = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
    if tail[2] and tonumber(tail[2]) >= score then score = tonumber(tail[2]) + 1 end
    redis.call('ZADD', KEYS[1], score, task)
  end
  redis.call('ZADD', KEYS[2], now + lease, task)
  keep(KEYS[1], lease)
  keep(KEYS[2], lease)
  unhold()
  -- The caller itself when there is room for it by now (a slot freed since its claims).
  return heads({0})
end

if op == 'renew' then
  -- Also when the lease had run out and the slot was pruned: the job does run upstream.
  hold(index)
  return {1}
end

-- release
unhold()
redis.call('ZREM', KEYS[1], task)
redis.call('ZREM', KEYS[2], task)
return heads({1})
`;

/** A capped route of a model: a name unique within the model, and its `maxConcurrency`. */
export interface SlotRoute {
  key: string;
  cap: number;
}

export interface SlotClaim {
  granted: boolean;
  /** Waiters to wake (their jobs promoted): there is room for them now. */
  wake: string[];
}

export interface UpstreamSlots {
  /**
   * A slot on `routes[index]` for the task, held for `leaseMs`; granted again while held. Taking it
   * frees any slot the task held on another of the model's routes.
   */
  claim(model: string, routes: readonly SlotRoute[], index: number, taskId: string, leaseMs: number): Promise<SlotClaim>;
  /**
   * Every capped route refused the task: it joins (or keeps its place in) the model's waiting list
   * for `leaseMs` (longer than its job stays parked). Its job must be parked already. Returns the
   * waiters to wake, the caller among them when a slot freed meanwhile.
   */
  wait(model: string, routes: readonly SlotRoute[], taskId: string, leaseMs: number): Promise<string[]>;
  /** Extends the task's slot on `routes[index]` by `leaseMs` from now (a step of its running job). */
  renew(model: string, routes: readonly SlotRoute[], index: number, taskId: string, leaseMs: number): Promise<void>;
  /** The task is done with its slot and its place (it finished): returns the waiters to wake. */
  release(model: string, routes: readonly SlotRoute[], taskId: string): Promise<string[]>;
}

interface SlotCommands {
  upstreamSlots(...args: (string | number)[]): Promise<(number | string)[]>;
}

// Waiters woken by one call at most: each is one promote, and the rest are woken by the calls that follow.
const MAX_WAKE = 32;

export function createUpstreamSlots(redis: RedisClient, prefix: string): UpstreamSlots {
  const commands = redis as unknown as RedisClient & SlotCommands;
  if (typeof commands.upstreamSlots !== "function") redis.defineCommand("upstreamSlots", { lua: SCRIPT });
  const run = async (model: string, routes: readonly SlotRoute[], op: string, taskId: string, leaseMs: number, index: number) => {
    const base = `${prefix}:upstream-slots:{${model}}`;
    const keys = [`${base}:waiting`, `${base}:waiting-leases`, ...routes.map((route) => `${base}:route:${route.key}`)];
    const reply = await commands.upstreamSlots(
      keys.length,
      ...keys,
      Date.now(),
      op,
      taskId,
      Math.ceil(leaseMs),
      index + 1,
      MAX_WAKE,
      ...routes.map((r) => r.cap),
    );
    return { status: Number(reply[0]), wake: reply.slice(1).map(String) };
  };
  return {
    async claim(model, routes, index, taskId, leaseMs) {
      const { status, wake } = await run(model, routes, "claim", taskId, leaseMs, index);
      return { granted: status === 1, wake };
    },
    async wait(model, routes, taskId, leaseMs) {
      return (await run(model, routes, "wait", taskId, leaseMs, 0)).wake;
    },
    async renew(model, routes, index, taskId, leaseMs) {
      await run(model, routes, "renew", taskId, leaseMs, index);
    },
    async release(model, routes, taskId) {
      return (await run(model, routes, "release", taskId, 1, 0)).wake;
    },
  };
}
