import { timingSafeEqual } from "node:crypto";
import { ApiError } from "@gen/errors";
import type { Database } from "@gen/db";
import { API_KEY_PATTERN, hashApiKey } from "@gen/ids";
import type { BadKeyThrottle } from "./bad-key-throttle.ts";

/**
 * Resolves a Bearer key to its user. Keys are looked up by their SHA-256 (the secret itself is
 * never compared, so lookup time does not depend on how much of it is right) and revocation is
 * read on every request, so it takes effect at once.
 */
export async function authenticateKey(db: Database, header: string | undefined, throttle?: { address: string; by: BadKeyThrottle }): Promise<{ userId: string }> {
  if (header === undefined || header === "") throw new ApiError(10001);
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match) throw new ApiError(10002);
  const key = match[1]!;
  if (!API_KEY_PATTERN.test(key)) throw new ApiError(10003);
  const keyHash = hashApiKey(key);
  throttle?.by.check(throttle.address, keyHash);
  // Plain SQL: this runs on every API request (see SqlPool in @gen/db).
  const { rows } = await db.$sql.query<{ keyHash: string; userId: string; revokedAt: Date | null }>(
    'SELECT key_hash AS "keyHash", user_id AS "userId", revoked_at AS "revokedAt" FROM api_keys WHERE key_hash = $1',
    [keyHash],
  );
  const row = rows[0];
  if (!row || !timingSafeEqual(Buffer.from(row.keyHash), Buffer.from(keyHash))) {
    await throttle?.by.recordFailure(throttle.address);
    throw new ApiError(10003);
  }
  if (row.revokedAt) throw new ApiError(10004);
  throttle?.by.recordValid(keyHash);
  return { userId: row.userId };
}
