import { createHash } from "node:crypto";
import type { RedisClient as Redis } from "@gen/queues";

/** Failures of one account from one address before waits start. */
const FREE_FAILURES = 5;
/** The wait doubles with each failure past FREE_FAILURES (1 s, 2 s, 4 s, ...) up to this. */
const MAX_WAIT_MS = 15 * 60_000;
// Failure counts and known addresses are forgotten after these, so a key set never grows for ever.
const FAILURES_TTL_MS = 24 * 3600_000;
const KNOWN_TTL_MS = 30 * 24 * 3600_000;

// Atomic check-and-claim: an attempt that may proceed while the account and address are in back-off
// stamps `last` at once, so parallel attempts from the same address cannot all slip through one
// wait. Below the free failures it writes nothing: a record is made only by a failure (FAIL), once
// the password has been checked. Clocked by Redis TIME (shared by gateways).
const CLAIM = `
local count = tonumber(redis.call('HGET', KEYS[1], 'count') or 0)
local free = tonumber(ARGV[1])
if count < free then return {1, 0} end
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local last = tonumber(redis.call('HGET', KEYS[1], 'last') or 0)
local wait = math.min(1000 * 2 ^ (count - free), tonumber(ARGV[2]))
if now < last + wait then return {0, math.ceil(last + wait - now)} end
redis.call('HSET', KEYS[1], 'last', now)
return {1, 0}
`;

// A failure counts and restarts the wait from its own end: the hash took its time, and the wait
// must not be spent while it ran.
const FAIL = `
local t = redis.call('TIME')
redis.call('HINCRBY', KEYS[1], 'count', 1)
redis.call('HSET', KEYS[1], 'last', t[1] * 1000 + math.floor(t[2] / 1000))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`;

type GuardRedis = Redis & {
  signInClaim(key: string, free: number, maxWaitMs: number): Promise<[number, number]>;
  signInFail(key: string, ttlMs: number): Promise<number>;
};

export interface SignInClaim {
  allowed: boolean;
  retryAfterMs: number;
}

/**
 * Per-account escalating back-off, keyed on (account, client address; an address is its limit key,
 * clientLimitKey from @gen/rate-limit): an attacker guessing one operator's password waits longer
 * and longer, while the operator signing in from another address is not slowed at all. Addresses
 * an account has signed in from before are remembered, so the looser per-account bucket (spread
 * over many addresses) cannot lock the operator out from them.
 */
export class SignInGuard {
  private readonly redis: GuardRedis;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    if (!("signInClaim" in redis)) redis.defineCommand("signInClaim", { numberOfKeys: 1, lua: CLAIM });
    if (!("signInFail" in redis)) redis.defineCommand("signInFail", { numberOfKeys: 1, lua: FAIL });
    this.redis = redis as GuardRedis;
  }

  async claim(email: string, address: string): Promise<SignInClaim> {
    const [allowed, retryAfterMs] = await this.redis.signInClaim(this.failuresKey(email, address), FREE_FAILURES, MAX_WAIT_MS);
    return { allowed: allowed === 1, retryAfterMs };
  }

  /** After the password check failed, never before: an attempt that was not checked leaves no record. */
  async recordFailure(email: string, address: string): Promise<void> {
    await this.redis.signInFail(this.failuresKey(email, address), FAILURES_TTL_MS);
  }

  async recordSuccess(email: string, address: string): Promise<void> {
    const known = this.knownKey(email);
    await this.redis.multi().del(this.failuresKey(email, address)).sadd(known, address).pexpire(known, KNOWN_TTL_MS).exec();
  }

  async isKnownAddress(email: string, address: string): Promise<boolean> {
    return (await this.redis.sismember(this.knownKey(email), address)) === 1;
  }

  // The e-mail is hashed: keys stay short and an e-mail never shows in a Redis key listing.
  private failuresKey(email: string, address: string): string {
    return `${this.prefix}:console:signin-fail:${digest(email)}:${address}`;
  }

  private knownKey(email: string): string {
    return `${this.prefix}:console:signin-known:${digest(email)}`;
  }
}

function digest(value: string): string {
  return createHash("sha256").update(value).digest("base64url").slice(0, 22);
}
