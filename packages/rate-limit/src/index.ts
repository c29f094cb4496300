export { clientLimitKey } from "./client-limit-key.ts";
export { RateLimiter, RedisUnavailable, type RateDecision, type RateLimiterOptions } from "./rate-limiter.ts";
