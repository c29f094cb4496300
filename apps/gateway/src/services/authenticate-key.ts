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
}

/**
 * Resolves a Bearer key to its user. Keys are looked up by their SHA-256 (the secret itself is
 * never compared, so lookup time does not depend on how much of it is right). A key this process
 * found valid and has had no revocation notice for (key-cache.ts) skips PostgreSQL; otherwise
 * revocation is read here.
 */
export async function authenticateKey(db: Database, header: string | undefined, throttle?: Throttle, cache?: KeyCache): Promise<AuthenticatedKey> {
  if (header === undefined || header === "") throw new ApiError(Err.MissingAuthorization);
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match) throw new ApiError(Err.NotBearer);
  const key = match[1]!;
  if (!API_KEY_PATTERN.test(key)) throw new ApiError(Err.KeyInvalid);
  const keyHash = hashApiKey(key);
  const cached = cache?.get(keyHash);
  if (cached !== undefined) return { userId: cached, keyHash };
  if (throttle) throttle.by.check(throttle.address(), keyHash);
  const read = cache?.beginRead();
  const userId = await lookUpKey(db, keyHash, throttle);
  throttle?.by.recordValid(keyHash);
  if (read !== undefined) cache!.set(keyHash, userId, read);
  return { userId, keyHash };
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
