export { clientLimitKey } from "./client-limit-key.ts";
export type { RateDecision } from "./rate-decision.ts";
export { RateLimiter, RedisUnavailable, type RateLimiterOptions } from "./rate-limiter.ts";
