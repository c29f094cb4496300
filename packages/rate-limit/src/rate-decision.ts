/** What a limiter answers for one request: whether it may pass, and the RateLimit headers' figures. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again (RateLimit-Reset). */
  resetSeconds: number;
  /** Whole seconds to wait before a retry, at least 1; 0 when allowed. */
  retryAfterSeconds: number;
}
