import { ensureUser, inTransaction, insertApiKey, listApiKeys, revokeApiKey, type Database } from "@gen/db";
import { checkLedger, grantCredits } from "@gen/ledger";
import { hashApiKey, newApiKey, newKeyId, newUserId } from "@gen/ids";
import type { RedisClient } from "@gen/queues";
import { KEY_CACHE_TTL_MS, markKeyRevoked } from "@gen/rate-limit";
import { UsageError } from "./parse-args.ts";

const USER_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function credits(raw: string | undefined, allowZero: boolean): number {
  const value = Number(raw);
  if (raw === undefined || !Number.isInteger(value) || value < (allowZero ? 0 : 1) || value > 1_000_000_000) {
    throw new UsageError(`--credits must be an integer from ${allowZero ? 0 : 1} to 1000000000`);
  }
  return value;
}

/** Creates the user when --user is absent (or unknown), grants the credits, returns the new key once. */
export async function createKey(db: Database, amount: number, userId: string | undefined) {
  if (userId !== undefined && !USER_ID.test(userId)) throw new UsageError("--user must be 1-64 characters of [A-Za-z0-9_-]");
  const id = userId ?? newUserId();
  const apiKey = newApiKey();
  await inTransaction(db, async (tx) => {
    await ensureUser(tx, id);
    if (amount > 0) await grantCredits(tx, id, amount);
    await insertApiKey(tx, { id: newKeyId(), userId: id, keyHash: hashApiKey(apiKey) });
  });
  return { user_id: id, api_key: apiKey };
}

const KEY_ID = /^key_[0-9a-f]{24}$/;

export type KeyToRevoke = { apiKey: string } | { keyId: string };

/**
 * Revokes by the key itself (its hash) or by its id (`list-keys` shows ids); revoking twice is fine
 * and writes the marker again. PostgreSQL first (the truth: every gateway without the key in its
 * cache refuses it from then on), then the Redis marker every gateway's limiter call reads for a
 * cached key. Without the marker a gateway may accept the key until its cache entry expires
 * (KEY_CACHE_TTL_MS), so that failure is an error that says so, and the command can be run again.
 */
export async function revokeKey(deps: { db: Database; redis: RedisClient; queuePrefix: string }, target: KeyToRevoke) {
  if ("keyId" in target && !KEY_ID.test(target.keyId)) throw new UsageError("--key-id must look like key_<24 hex characters>");
  if ("apiKey" in target && !target.apiKey) throw new UsageError("no API key on stdin");
  const key = await revokeApiKey(deps.db, "keyId" in target ? { id: target.keyId } : { keyHash: hashApiKey(target.apiKey) });
  if (!key) throw new UsageError("no such API key");
  try {
    await markKeyRevoked(deps.redis, deps.queuePrefix, key.keyHash);
  } catch (error) {
    throw new Error(
      `the key is revoked in the database, but Redis did not take the revocation marker (${error instanceof Error ? error.message : String(error)}): ` +
        `gateways that have the key cached may accept it for up to ${KEY_CACHE_TTL_MS / 1000} s; run revoke-key again once Redis answers`,
      { cause: error },
    );
  }
  return { revoked: true };
}

/** A user's keys by id (never the key, which is not stored), so one can be revoked without having it. */
export async function listKeys(db: Database, userId: string | undefined) {
  if (!userId) throw new UsageError("--user is required");
  const keys = await listApiKeys(db, userId);
  return { user_id: userId, keys: keys.map((k) => ({ key_id: k.id, created_at: k.createdAt.toISOString(), revoked_at: k.revokedAt?.toISOString() ?? null })) };
}

export async function addCredits(db: Database, userId: string | undefined, amount: number) {
  if (!userId) throw new UsageError("--user is required");
  const credits = await grantCredits(db, userId, amount);
  if (credits === undefined) throw new UsageError(`no such user: ${userId}`);
  return { user_id: userId, credits };
}

/**
 * The ledger's invariant (@gen/ledger checkLedger), for everyone or one user. Unlike the other
 * commands it prints one line per violation, on stdout, and fails (exit 1) when there is any.
 */
export async function ledgerCheck(db: Database, userId: string | undefined): Promise<{ violations: string[] }> {
  if (userId !== undefined && !USER_ID.test(userId)) throw new UsageError("--user must be 1-64 characters of [A-Za-z0-9_-]");
  return { violations: await checkLedger(db, userId === undefined ? {} : { userId }) };
}
