import { ensureUser, inTransaction, insertApiKey, listApiKeys, revokeApiKey, type Database } from "@gen/db";
import { checkLedger, grantCredits } from "@gen/ledger";
import { hashApiKey, newApiKey, newKeyId, newUserId } from "@gen/ids";
import { UsageError } from "./parse-args.ts";

const USER_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function credits(raw: string | undefined, allowZero: boolean): number {
  const value = Number(raw);
  if (raw === undefined || !Number.isInteger(value) || value < (allowZero ? 0 : 1) || value > 1_000_000_000) {
    throw new UsageError(`--credits must be an integer from ${allowZero ? 0 : 1} to 1000000000`);
  }
  return value;
}

/** Creates the user when --user is absent (or unknown), grants the credits, returns the new key once, with its id. */
export async function createKey(db: Database, amount: number, userId: string | undefined) {
  if (userId !== undefined && !USER_ID.test(userId)) throw new UsageError("--user must be 1-64 characters of [A-Za-z0-9_-]");
  const id = userId ?? newUserId();
  const apiKey = newApiKey();
  const keyId = newKeyId();
  await inTransaction(db, async (tx) => {
    await ensureUser(tx, id);
    if (amount > 0) await grantCredits(tx, id, amount);
    await insertApiKey(tx, { id: keyId, userId: id, keyHash: hashApiKey(apiKey) });
  });
  // The key id is what list-keys, show-user and revoke-key --key-id name it by later.
  return { user_id: id, api_key: apiKey, key_id: keyId };
}

const KEY_ID = /^key_[0-9a-f]{24}$/;

export type KeyToRevoke = { apiKey: string } | { keyId: string };

/**
 * Revokes by the key itself (its hash) or by its id (`list-keys` shows ids); revoking twice is fine.
 * One UPDATE: its commit is the revocation everywhere, since the api_keys trigger notifies every
 * gateway process in the same transaction (docs/internals.md "Caches in the gateway").
 */
export async function revokeKey(db: Database, target: KeyToRevoke) {
  if ("keyId" in target && !KEY_ID.test(target.keyId)) throw new UsageError("--key-id must look like key_<24 hex characters>");
  if ("apiKey" in target && !target.apiKey) throw new UsageError("no API key on stdin");
  const found = await revokeApiKey(db, "keyId" in target ? { id: target.keyId } : { keyHash: hashApiKey(target.apiKey) });
  if (!found) throw new UsageError("no such API key");
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
