import type { RateConfig } from "@gen/config";
import { ApiError, Err } from "@gen/errors";
import type { RateLimiter } from "@gen/rate-limit";

const VALID_KEYS_MAX = 50_000;
const VALID_KEY_TTL_MS = 15 * 60_000;

/**
 * Throttles bogus-key floods per client address before they reach PostgreSQL, without a round
 * trip on the normal path. Only failed lookups count (one GCRA call on Redis, shared by the fleet,
 * this process's own counter while Redis is away). Once an address is over its limit, this
 * process answers its unknown keys 429/50001 from memory until the bucket allows one again; keys
 * this process has seen succeed recently still go through (customers behind the same NAT).
 */
export class BadKeyThrottle {
  private readonly blockedUntil = new Map<string, number>();
  // Insertion-ordered, refreshed on use: the oldest entries go first when full.
  private readonly validKeys = new Map<string, number>();

  constructor(
    private readonly limiter: RateLimiter,
    private readonly rate: RateConfig,
  ) {}

  /** Before the lookup: 429 for an address over its limit, unless the key is known good. */
  check(address: string, keyHash: string, now = Date.now()): void {
    const until = this.blockedUntil.get(address);
    if (until === undefined) return;
    if (until <= now) {
      this.blockedUntil.delete(address);
      return;
    }
    const seen = this.validKeys.get(keyHash);
    if (seen !== undefined && seen > now - VALID_KEY_TTL_MS) return;
    throw tooMany(Math.max(1, Math.ceil((until - now) / 1000)));
  }

  recordValid(keyHash: string, now = Date.now()): void {
    this.validKeys.delete(keyHash);
    this.validKeys.set(keyHash, now);
    if (this.validKeys.size > VALID_KEYS_MAX) this.validKeys.delete(this.validKeys.keys().next().value!);
  }

  /** After a lookup found no key: counts it; 429 instead of 10003 once the address is over. */
  async recordFailure(address: string, now = Date.now()): Promise<void> {
    const decision = await this.limiter.takeOrLocal("bad-key", address, this.rate);
    if (decision.allowed) return;
    if (this.blockedUntil.size > VALID_KEYS_MAX) this.blockedUntil.clear();
    this.blockedUntil.set(address, now + decision.retryAfterSeconds * 1000);
    throw tooMany(decision.retryAfterSeconds);
  }
}

function tooMany(retryAfterSeconds: number): ApiError {
  return new ApiError(Err.RateLimited, `Too many invalid API keys from this address; retry after ${retryAfterSeconds} s`, {
    "Retry-After": String(retryAfterSeconds),
  });
}
