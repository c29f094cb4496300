import type { RedisClient as Redis } from "@gen/queues";
import type { RateConfig } from "@gen/config";
import { LocalRateLimiter } from "./local-rate-limiter.ts";
import { withDeadline } from "@gen/queues";
import { revokedKeyMarker } from "./revoked-key-marker.ts";

export interface RateDecision {
  allowed: boolean;
  /** The API key named in the call carries a revocation marker (revoked-key-marker.ts): nothing was taken. */
  revoked?: boolean;
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

// The same script with the key's revocation marker read first, so a gateway that answers from its
// key-to-user cache still sees a revocation on the next request at no extra round trip.
const GCRA_UNLESS_REVOKED = `
if redis.call('EXISTS', KEYS[2]) == 1 then return {-1, 0, 0, 0} end
${GCRA}`;

type Reply = Promise<[number, number, number, number]>;
type GcraRedis = Redis & {
  gcra(key: string, intervalMs: number, burst: number): Reply;
  gcraUnlessRevoked(key: string, marker: string, intervalMs: number, burst: number): Reply;
};

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

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    if (!("gcra" in redis)) redis.defineCommand("gcra", { numberOfKeys: 1, lua: GCRA });
    if (!("gcraUnlessRevoked" in redis)) redis.defineCommand("gcraUnlessRevoked", { numberOfKeys: 2, lua: GCRA_UNLESS_REVOKED });
    this.redis = redis as GcraRedis;
  }

  /** False while Redis is known to be away: a call would throw RedisUnavailable at once. */
  get sharedAvailable(): boolean {
    return this.redis.status === "ready" && Date.now() >= this.skipRedisUntil;
  }

  /**
   * Throws RedisUnavailable (at once while Redis is known to be away). With `keyHash`, the same
   * call first reads that API key's revocation marker and answers `revoked` without taking.
   */
  async take(kind: "poll" | "submit" | "sign-in" | "bad-key", subject: string, rate: RateConfig, keyHash?: string): Promise<RateDecision> {
    if (!this.sharedAvailable) throw new RedisUnavailable();
    try {
      return await withDeadline(this.takeShared(kind, subject, rate, keyHash), DECISION_TIMEOUT_MS, "rate limiter");
    } catch (error) {
      this.skipRedisUntil = Date.now() + BREAKER_OPEN_MS;
      throw new RedisUnavailable({ cause: error });
    }
  }

  /** Like take, but bounded by this process's own counters while Redis is away. */
  async takeOrLocal(kind: "poll" | "bad-key", subject: string, rate: RateConfig, keyHash?: string): Promise<RateDecision & { local: boolean }> {
    // Both takes answer an object of their own: marking it costs no copy.
    let decision: RateDecision & { local?: boolean };
    try {
      decision = await this.take(kind, subject, rate, keyHash);
      decision.local = false;
    } catch (error) {
      if (!(error instanceof RedisUnavailable)) throw error;
      decision = this.local.take(`${kind}:${subject}`, rate);
      decision.local = true;
    }
    return decision as RateDecision & { local: boolean };
  }

  private async takeShared(kind: string, subject: string, rate: RateConfig, keyHash: string | undefined): Promise<RateDecision> {
    const intervalMs = 1000 / rate.perSec;
    const key = `${this.prefix}:rl:${kind}:${subject}`;
    const [allowed, remaining, retryMs, resetMs] =
      keyHash === undefined
        ? await this.redis.gcra(key, intervalMs, rate.burst)
        : await this.redis.gcraUnlessRevoked(key, revokedKeyMarker(this.prefix, keyHash), intervalMs, rate.burst);
    if (allowed === -1) return { allowed: false, revoked: true, limit: rate.burst, remaining: 0, resetSeconds: 0, retryAfterSeconds: 0 };
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
