import type { RedisClient as Redis } from "@gen/queues";
import type { RateConfig } from "@gen/config";
import { LocalRateLimiter } from "./local-rate-limiter.ts";
import type { RateDecision } from "./rate-decision.ts";
import { gatherBatches } from "@gen/db";
import { withDeadline } from "@gen/queues";

// GCRA (a token bucket without a refill job): one key per user and class holding the "theoretical
// arrival time". One EVALSHA per request, clocked by Redis TIME so every gateway instance agrees.
// The step is written once and shared by the two scripts below.
const GCRA_STEP = `
local function gcra(key, now, interval, burst)
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then tat = now end
  local next_tat = tat + interval
  local allow_at = next_tat - burst * interval
  if allow_at > now then
    return {0, 0, math.ceil(allow_at - now), math.ceil(tat - now)}
  end
  redis.call('SET', key, next_tat, 'PX', math.ceil(next_tat - now))
  return {1, math.floor((now - allow_at) / interval), 0, math.ceil(next_tat - now)}
end
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
`;

const GCRA = `${GCRA_STEP}
return gcra(KEYS[1], now, tonumber(ARGV[1]), tonumber(ARGV[2]))`;

// Every take gathered in one event-loop turn (see `gather`): KEYS are the buckets, ARGV pairs
// (interval, burst); the answer is the four numbers of each take in turn. One clock read serves
// them all, and takes of the same bucket run in arrival order, each seeing the one before, as
// separate calls would.
const GCRA_GATHERED = `${GCRA_STEP}
local out = {}
for i = 1, #KEYS do
  local answer = gcra(KEYS[i], now, tonumber(ARGV[2 * i - 1]), tonumber(ARGV[2 * i]))
  for j = 1, 4 do out[#out + 1] = answer[j] end
end
return out
`;

type Reply = [number, number, number, number];
type GcraRedis = Redis & {
  gcra(key: string, intervalMs: number, burst: number): Promise<Reply>;
  gcraGathered(keyCount: number, ...keysThenArgs: (string | number)[]): Promise<number[]>;
};

interface PendingTake {
  key: string;
  intervalMs: number;
  burst: number;
  answer(reply: Reply): void;
  fail(error: unknown): void;
}

export interface RateLimiterOptions {
  /**
   * Gather the takes of one event-loop turn into ONE script call (the gateway: a take per request).
   * On Redis Cluster every key lives in the slot of QUEUE_PREFIX's hash tag, so one call may hold
   * them all. Off, each take is a script call of its own.
   */
  gather?: boolean;
}

// Takes per gathered script at most (a script blocks Redis while it runs); every call goes out at
// the end of its turn, however many are in flight, so the wait is never needed.
const TAKE_BATCHES = { maxSize: 256, maxInFlight: Number.POSITIVE_INFINITY, maxWaitMs: 1 };

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
  private readonly gather: boolean;
  // After the turn's I/O callbacks: every request that arrived in this turn has taken by then. One
  // batch (every key shares QUEUE_PREFIX's slot); a turn past the cap is sent as several calls, and
  // no call waits for another (a take must not wait on a slow Redis call beyond its own deadline).
  private readonly enqueue = gatherBatches<PendingTake>(TAKE_BATCHES, (takes) => this.flush(takes));

  constructor(
    redis: Redis,
    private readonly prefix: string,
    options: RateLimiterOptions = {},
  ) {
    if (!("gcra" in redis)) redis.defineCommand("gcra", { numberOfKeys: 1, lua: GCRA });
    if (!("gcraGathered" in redis)) redis.defineCommand("gcraGathered", { lua: GCRA_GATHERED });
    this.redis = redis as GcraRedis;
    this.gather = options.gather ?? false;
  }

  /** False while Redis is known to be away: a call would throw RedisUnavailable at once. */
  private get sharedAvailable(): boolean {
    return this.redis.status === "ready" && Date.now() >= this.skipRedisUntil;
  }

  /** Throws RedisUnavailable (at once while Redis is known to be away). */
  async take(kind: "poll" | "submit" | "sign-in" | "bad-key", subject: string, rate: RateConfig): Promise<RateDecision> {
    if (!this.sharedAvailable) throw new RedisUnavailable();
    const key = `${this.prefix}:rl:${kind}:${subject}`;
    const intervalMs = 1000 / rate.perSec;
    let reply: Reply;
    try {
      // A gathered call has one deadline for all its takes.
      reply = this.gather
        ? await new Promise<Reply>((answer, fail) => this.enqueue({ key, intervalMs, burst: rate.burst, answer, fail }))
        : await withDeadline(this.redis.gcra(key, intervalMs, rate.burst), DECISION_TIMEOUT_MS, "rate limiter");
    } catch (error) {
      this.skipRedisUntil = Date.now() + BREAKER_OPEN_MS;
      throw new RedisUnavailable({ cause: error });
    }
    return decide(reply, rate);
  }

  /** Like take, but bounded by this process's own counters while Redis is away. */
  async takeOrLocal(kind: "poll" | "bad-key", subject: string, rate: RateConfig): Promise<RateDecision & { local: boolean }> {
    // Both takes answer an object of their own: marking it costs no copy.
    let decision: RateDecision & { local?: boolean };
    try {
      decision = await this.take(kind, subject, rate);
      decision.local = false;
    } catch (error) {
      if (!(error instanceof RedisUnavailable)) throw error;
      decision = this.local.take(`${kind}:${subject}`, rate);
      decision.local = true;
    }
    return decision as RateDecision & { local: boolean };
  }

  private flush(takes: PendingTake[]): Promise<void> {
    return withDeadline(this.callGathered(takes), DECISION_TIMEOUT_MS, "rate limiter").then(
      (replies) => {
        for (let i = 0; i < takes.length; i++) takes[i]!.answer(replies[i]!);
      },
      (error: unknown) => {
        for (const take of takes) take.fail(error);
      },
    );
  }

  private async callGathered(takes: PendingTake[]): Promise<Reply[]> {
    if (takes.length === 1) {
      const take = takes[0]!;
      return [await this.redis.gcra(take.key, take.intervalMs, take.burst)];
    }
    const keys: string[] = [];
    const args: (string | number)[] = [];
    for (const take of takes) {
      keys.push(take.key);
      args.push(take.intervalMs, take.burst);
    }
    const flat = await this.redis.gcraGathered(keys.length, ...keys, ...args);
    const replies: Reply[] = [];
    for (let i = 0; i < takes.length; i++) replies.push([flat[4 * i]!, flat[4 * i + 1]!, flat[4 * i + 2]!, flat[4 * i + 3]!]);
    return replies;
  }
}

function decide([allowed, remaining, retryMs, resetMs]: Reply, rate: RateConfig): RateDecision {
  return {
    allowed: allowed === 1,
    limit: rate.burst,
    remaining,
    resetSeconds: Math.ceil(resetMs / 1000),
    retryAfterSeconds: allowed === 1 ? 0 : Math.max(1, Math.ceil(retryMs / 1000)),
  };
}

export class RedisUnavailable extends Error {
  constructor(options?: { cause: unknown }) {
    super("rate limiter: Redis unavailable", options);
    this.name = "RedisUnavailable";
  }
}
