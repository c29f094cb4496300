import type { RedisClient as Redis } from "@gen/queues";
import type { RateConfig } from "@gen/config";
import { LocalRateLimiter } from "./local-rate-limiter.ts";
import { withDeadline } from "@gen/queues";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again (RateLimit-Reset). */
  resetSeconds: number;
  /** Whole seconds to wait before a retry, at least 1; 0 when allowed. */
  retryAfterSeconds: number;
}

// GCRA (a token bucket without a refill job): one key per user and class holding the "theoretical
// arrival time". One EVALSHA per request, clocked by Redis TIME so every gateway instance agrees.
const GCRA = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local next_tat = tat + interval
local allow_at = next_tat - burst * interval
if allow_at > now then
  return {0, 0, math.ceil(allow_at - now), math.ceil(tat - now)}
end
redis.call('SET', KEYS[1], next_tat, 'PX', math.ceil(next_tat - now))
return {1, math.floor((now - allow_at) / interval), 0, math.ceil(next_tat - now)}
`;

type GcraRedis = Redis & { gcra(key: string, intervalMs: number, burst: number): Promise<[number, number, number, number]> };

// A limiter answer is one in-memory script: far below this unless Redis is hung (stopped, paused),
// and then a poll must not wait for the connection's 2 s command time-out.
const DECISION_TIMEOUT_MS = 500;
// After a failed call Redis is not asked again for this long, so a hung Redis delays one request
// per interval by DECISION_TIMEOUT_MS rather than every request.
const BREAKER_OPEN_MS = 2000;

export class RateLimiter {
  private readonly redis: GcraRedis;
  private readonly local = new LocalRateLimiter();
  private skipRedisUntil = 0;

  constructor(redis: Redis, private readonly prefix: string) {
    if (!("gcra" in redis)) redis.defineCommand("gcra", { numberOfKeys: 1, lua: GCRA });
    this.redis = redis as GcraRedis;
  }

  /** Throws RedisUnavailable (at once while Redis is known to be away). */
  async take(kind: "poll" | "submit" | "sign-in" | "bad-key", subject: string, rate: RateConfig): Promise<RateDecision> {
    if (this.redis.status !== "ready" || Date.now() < this.skipRedisUntil) throw new RedisUnavailable();
    try {
      return await withDeadline(this.takeShared(kind, subject, rate), DECISION_TIMEOUT_MS, "rate limiter");
    } catch (error) {
      this.skipRedisUntil = Date.now() + BREAKER_OPEN_MS;
      throw new RedisUnavailable({ cause: error });
    }
  }

  /** Like take, but bounded by this process's own counters while Redis is away. */
  async takeOrLocal(kind: "poll" | "bad-key", subject: string, rate: RateConfig): Promise<RateDecision & { local: boolean }> {
    try {
      return { ...(await this.take(kind, subject, rate)), local: false };
    } catch (error) {
      if (!(error instanceof RedisUnavailable)) throw error;
      return { ...this.local.take(`${kind}:${subject}`, rate), local: true };
    }
  }

  private async takeShared(kind: string, subject: string, rate: RateConfig): Promise<RateDecision> {
    const intervalMs = 1000 / rate.perSec;
    const [allowed, remaining, retryMs, resetMs] = await this.redis.gcra(`${this.prefix}:rl:${kind}:${subject}`, intervalMs, rate.burst);
    return {
      allowed: allowed === 1,
      limit: rate.burst,
      remaining,
      resetSeconds: Math.ceil(resetMs / 1000),
      retryAfterSeconds: allowed === 1 ? 0 : Math.max(1, Math.ceil(retryMs / 1000)),
    };
  }
}

export class RedisUnavailable extends Error {
  constructor(options?: { cause: unknown }) {
    super("rate limiter: Redis unavailable", options);
    this.name = "RedisUnavailable";
  }
}
