import { timingSafeEqual } from "node:crypto";
import { ApiError, Err } from "@gen/errors";
import { findKeyByHash, type Database } from "@gen/db";
import { API_KEY_PATTERN, hashApiKey } from "@gen/ids";
import type { BadKeyThrottle } from "./bad-key-throttle.ts";

/**
 * Resolves a Bearer key to its user. Keys are looked up by their SHA-256 (the secret itself is
 * never compared, so lookup time does not depend on how much of it is right) and revocation is
 * read on every request, so it takes effect at once.
 */
export async function authenticateKey(db: Database, header: string | undefined, throttle?: { address: string; by: BadKeyThrottle }): Promise<{ userId: string }> {
  if (header === undefined || header === "") throw new ApiError(Err.MissingAuthorization);
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match) throw new ApiError(Err.NotBearer);
  const key = match[1]!;
  if (!API_KEY_PATTERN.test(key)) throw new ApiError(Err.KeyInvalid);
  const keyHash = hashApiKey(key);
  throttle?.by.check(throttle.address, keyHash);
  const row = await findKeyByHash(db, keyHash);
  if (!row || !timingSafeEqual(Buffer.from(row.keyHash), Buffer.from(keyHash))) {
    await throttle?.by.recordFailure(throttle.address);
    throw new ApiError(Err.KeyInvalid);
  }
  if (row.revokedAt) throw new ApiError(Err.KeyRevoked);
  throttle?.by.recordValid(keyHash);
  return { userId: row.userId };
}
