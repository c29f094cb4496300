import { timingSafeEqual } from "node:crypto";
import { ApiError, Err } from "@gen/errors";
import { findKeyByHash, type Database } from "@gen/db";
import { API_KEY_PATTERN, hashApiKey } from "@gen/ids";
import type { BadKeyThrottle } from "./bad-key-throttle.ts";
import type { KeyCache } from "./key-cache.ts";

/** The bad-key throttle and the client's address, read only when the throttle is consulted. */
interface Throttle {
  address: () => string;
  by: BadKeyThrottle;
}

export interface AuthenticatedKey {
  userId: string;
  keyHash: string;
  /** Answered from this process's KeyCache: the limiter's call must confirm it is not revoked. */
  fromCache: boolean;
}

/**
 * Resolves a Bearer key to its user. Keys are looked up by their SHA-256 (the secret itself is
 * never compared, so lookup time does not depend on how much of it is right). With `cache.use`
 * (the caller's rate limiter will read the key's revocation marker in the same Redis call) a
 * key this process found valid within KEY_CACHE_TTL_MS skips PostgreSQL; otherwise revocation is
 * read here, so either way it takes effect on the next request.
 */
export async function authenticateKey(
  db: Database,
  header: string | undefined,
  throttle?: Throttle,
  cache?: { keys: KeyCache; use: boolean },
): Promise<AuthenticatedKey> {
  if (header === undefined || header === "") throw new ApiError(Err.MissingAuthorization);
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match) throw new ApiError(Err.NotBearer);
  const key = match[1]!;
  if (!API_KEY_PATTERN.test(key)) throw new ApiError(Err.KeyInvalid);
  const keyHash = hashApiKey(key);
  if (cache?.use) {
    const userId = cache.keys.get(keyHash);
    if (userId !== undefined) return { userId, keyHash, fromCache: true };
  }
  if (throttle) throttle.by.check(throttle.address(), keyHash);
  const read = cache?.keys.beginRead();
  const userId = await lookUpKey(db, keyHash, throttle);
  throttle?.by.recordValid(keyHash);
  if (read !== undefined) cache!.keys.set(keyHash, userId, read);
  return { userId, keyHash, fromCache: false };
}

/** A cached key read again from PostgreSQL (its limiter call could not reach Redis): 10003/10004 as a fresh lookup would. */
export async function confirmKey(db: Database, keyHash: string, keys: KeyCache): Promise<void> {
  try {
    await lookUpKey(db, keyHash);
  } catch (error) {
    keys.delete(keyHash);
    throw error;
  }
}

async function lookUpKey(db: Database, keyHash: string, throttle?: Throttle): Promise<string> {
  const row = await findKeyByHash(db, keyHash);
  if (!row || !timingSafeEqual(Buffer.from(row.keyHash), Buffer.from(keyHash))) {
    if (throttle) await throttle.by.recordFailure(throttle.address());
    throw new ApiError(Err.KeyInvalid);
  }
  if (row.revokedAt) throw new ApiError(Err.KeyRevoked);
  return row.userId;
}
