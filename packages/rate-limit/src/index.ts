export { RateLimiter, RedisUnavailable, type RateDecision, type RateLimiterOptions } from "./rate-limiter.ts";
