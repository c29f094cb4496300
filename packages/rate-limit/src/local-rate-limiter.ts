import type { RateConfig } from "@gen/config";
import type { RateDecision } from "./rate-decision.ts";

const SWEEP_EVERY = 1000;

/**
 * The same GCRA as the shared limiter, in this process's memory: the fallback while Redis is
 * away (polls stay served from PostgreSQL, each gateway bounding each user on its own). A fleet of
 * n gateways then allows up to n times the configured rate per user.
 */
export class LocalRateLimiter {
  private readonly tats = new Map<string, number>();
  private takes = 0;

  take(key: string, rate: RateConfig, now = Date.now()): RateDecision {
    if (++this.takes % SWEEP_EVERY === 0) this.sweep(now);
    const interval = 1000 / rate.perSec;
    const tat = Math.max(this.tats.get(key) ?? now, now);
    const nextTat = tat + interval;
    const allowAt = nextTat - rate.burst * interval;
    if (allowAt > now) {
      return {
        allowed: false,
        limit: rate.burst,
        remaining: 0,
        resetSeconds: Math.ceil((tat - now) / 1000),
        retryAfterSeconds: Math.max(1, Math.ceil((allowAt - now) / 1000)),
      };
    }
    this.tats.set(key, nextTat);
    return {
      allowed: true,
      limit: rate.burst,
      remaining: Math.floor((now - allowAt) / interval),
      resetSeconds: Math.ceil((nextTat - now) / 1000),
      retryAfterSeconds: 0,
    };
  }

  /** Full buckets need no entry: the map holds only users seen within their refill time. */
  private sweep(now: number): void {
    for (const [key, tat] of this.tats) if (tat <= now) this.tats.delete(key);
  }
}
