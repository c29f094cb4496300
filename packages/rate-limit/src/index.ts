export { clientLimitKey } from "./client-limit-key.ts";
export { RateLimiter, RedisUnavailable, type RateDecision, type RateLimiterOptions } from "./rate-limiter.ts";
export { KEY_CACHE_TTL_MS, markKeyRevoked } from "./revoked-key-marker.ts";
