export { RateLimiter, RedisUnavailable, type RateDecision } from "./rate-limiter.ts";
