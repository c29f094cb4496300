import type { RedisClient } from "./create-redis.ts";

/**
 * Fleet-wide caps on webhook attempts in flight: per receiver host and per customer (the task's
 * user, all its hosts together: a wildcard DNS record gives a customer as many host names as it
 * likes). One slow or dead receiver, or one customer's many, cannot hold every worker's delivery
 * slots. An attempt over either cap is not run: its job is delayed with jitter and asks again.
 *
 * A count is a sorted set of the attempts in flight (their job ids), each scored with when it is
 * dropped even if never released: a worker that dies mid-attempt leaks its place only until then.
 */
export type CapScope = "host" | "customer";

// KEYS[1] the host's attempts in flight, KEYS[2] the customer's. ARGV: now ms, hold ms, host cap,
// customer cap, attempt (job id). Returns 0 (taken, or held already), 1 host full, 2 customer full.
const TAKE = `
local now = tonumber(ARGV[1])
local caps = {tonumber(ARGV[3]), tonumber(ARGV[4])}
for i = 1, 2 do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if not redis.call('ZSCORE', KEYS[i], ARGV[5]) and redis.call('ZCARD', KEYS[i]) >= caps[i] then return i end
end
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], now + tonumber(ARGV[2]), ARGV[5])
  redis.call('PEXPIRE', KEYS[i], ARGV[2])
end
return 0`;

// KEYS[1] the host's attempts in flight, KEYS[2] the customer's; ARGV[1] the attempt. One command
// instead of a MULTI of two.
const RELEASE = `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])`;

interface CapCommands {
  releaseDeliveryCap(host: string, customer: string, attempt: string): Promise<unknown>;
  takeDeliveryCap(host: string, customer: string, now: number, holdMs: number, hostCap: number, customerCap: number, attempt: string): Promise<number>;
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
  /** Takes a place for `attempt` under both caps (one round trip), or names the one that is full. */
  take(host: string, customer: string, attempt: string): Promise<"taken" | CapScope>;
  /** Gives the place back. */
  release(host: string, customer: string, attempt: string): Promise<void>;
  /** The attempts in flight under one scope's cap now (expired places included until the next take). */
  inFlight(scope: CapScope, name: string): Promise<number>;
}

export function createDeliveryCaps(redis: RedisClient, options: DeliveryCapOptions): DeliveryCaps {
  const commands = redis as unknown as RedisClient & CapCommands;
  if (typeof commands.takeDeliveryCap !== "function") {
    redis.defineCommand("takeDeliveryCap", { numberOfKeys: 2, lua: TAKE });
    redis.defineCommand("releaseDeliveryCap", { numberOfKeys: 2, lua: RELEASE });
  }
  // Under QUEUE_PREFIX, which is a hash tag on a cluster: both keys are in one slot.
  const key = (scope: CapScope, name: string) => `${options.prefix}:webhook-cap:${scope}:${name}`;
  return {
    async take(host, customer, attempt) {
      const full = await commands.takeDeliveryCap(
        key("host", host),
        key("customer", customer),
        Date.now(),
        options.holdMs,
        options.hostCap,
        options.customerCap,
        attempt,
      );
      return full === 1 ? "host" : full === 2 ? "customer" : "taken";
    },
    async release(host, customer, attempt) {
      await commands.releaseDeliveryCap(key("host", host), key("customer", customer), attempt);
    },
    inFlight: (scope, name) => redis.zcard(key(scope, name)),
  };
}
