import type { Database } from "@gen/db";
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

/** Creates the user when --user is absent (or unknown), grants the credits, returns the new key once. */
export async function createKey(db: Database, amount: number, userId: string | undefined) {
  if (userId !== undefined && !USER_ID.test(userId)) throw new UsageError("--user must be 1-64 characters of [A-Za-z0-9_-]");
  const id = userId ?? newUserId();
  const apiKey = newApiKey();
  await db.$transaction(async (tx) => {
    await tx.user.upsert({ where: { id }, create: { id, credits: 0 }, update: {} });
    if (amount > 0) await grant(tx, id, amount);
    await tx.apiKey.create({ data: { id: newKeyId(), userId: id, keyHash: hashApiKey(apiKey) } });
  });
  return { user_id: id, api_key: apiKey };
}

const KEY_ID = /^key_[0-9a-f]{24}$/;

export type KeyToRevoke = { apiKey: string } | { keyId: string };

/** Revokes by the key itself (its hash) or by its id (`list-keys` shows ids); revoking twice is fine. */
export async function revokeKey(db: Database, target: KeyToRevoke) {
  const where = "keyId" in target ? { id: target.keyId } : { keyHash: hashApiKey(target.apiKey) };
  if ("keyId" in target && !KEY_ID.test(target.keyId)) throw new UsageError("--key-id must look like key_<24 hex characters>");
  if ("apiKey" in target && !target.apiKey) throw new UsageError("no API key on stdin");
  const result = await db.apiKey.updateMany({ where: { ...where, revokedAt: null }, data: { revokedAt: new Date() } });
  const exists = result.count > 0 || (await db.apiKey.count({ where })) > 0;
  if (!exists) throw new UsageError("no such API key");
  return { revoked: true };
}

/** A user's keys by id (never the key, which is not stored), so one can be revoked without having it. */
export async function listKeys(db: Database, userId: string | undefined) {
  if (!userId) throw new UsageError("--user is required");
  const keys = await db.apiKey.findMany({ where: { userId }, orderBy: { createdAt: "asc" }, select: { id: true, createdAt: true, revokedAt: true } });
  return { user_id: userId, keys: keys.map((k) => ({ key_id: k.id, created_at: k.createdAt.toISOString(), revoked_at: k.revokedAt?.toISOString() ?? null })) };
}

export async function addCredits(db: Database, userId: string | undefined, amount: number) {
  if (!userId) throw new UsageError("--user is required");
  return db.$transaction(async (tx) => {
    const user = await tx.user.findUnique({ where: { id: userId } });
    if (!user) throw new UsageError(`no such user: ${userId}`);
    const credits = await grant(tx, userId, amount);
    return { user_id: userId, credits };
  });
}

type Tx = Parameters<Parameters<Database["$transaction"]>[0]>[0];

async function grant(tx: Tx, userId: string, amount: number): Promise<number> {
  const user = await tx.user.update({ where: { id: userId }, data: { credits: { increment: amount } } });
  await tx.ledgerEntry.create({ data: { userId, kind: "grant", amount, delta: amount } });
  return user.credits;
}
