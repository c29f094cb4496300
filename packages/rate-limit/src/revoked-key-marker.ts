import type { RedisClient as Redis } from "@gen/queues";
import { withDeadline } from "@gen/queues";

/**
 * How long a gateway may answer for an API key from its own memory before reading PostgreSQL
 * again. This bounds a revocation whose marker never reached Redis (Redis away from the admin
 * CLI, or its data lost since); with the marker in place a revocation shows on the next request.
 */
export const KEY_CACHE_TTL_MS = 60_000;

// A marker must outlive every cache entry read before the revocation committed (each lives
// KEY_CACHE_TTL_MS from the start of its read); a day is that with a wide margin, and revoked
// keys are few, so the markers cost next to nothing.
const MARKER_TTL_SECONDS = 24 * 3600;
const MARKER_WRITE_TIMEOUT_MS = 2000;

/** The Redis key the limiter script reads (rate-limiter.ts) before it takes for a cached key. */
export function revokedKeyMarker(prefix: string, keyHash: string): string {
  return `${prefix}:revoked-key:${keyHash}`;
}

/** Tells every gateway's next limiter call that this key is revoked; throws when Redis does not answer. */
export async function markKeyRevoked(redis: Redis, prefix: string, keyHash: string): Promise<void> {
  await withDeadline(redis.set(revokedKeyMarker(prefix, keyHash), "1", "EX", MARKER_TTL_SECONDS), MARKER_WRITE_TIMEOUT_MS, "revocation marker");
}
