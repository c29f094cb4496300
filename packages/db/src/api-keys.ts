import { compiledOnce } from "./compiled-once.ts";
import type { Queryable } from "./queryable.ts";

// Every statement on `api_keys`. The lookup runs on every API request: one indexed read on the pg
// pool through Kysely (Prisma's client would cost milliseconds of CPU here, bench/README.md).

export interface KeyOwner {
  keyHash: string;
  userId: string;
  revokedAt: Date | null;
}

/**
 * The key with this SHA-256, revoked or not. The gateway reads it on a miss of its key-to-user
 * cache, whose entries the revocation notices keep honest (key-revocations.ts, apps/gateway key-cache.ts).
 */
export async function findKeyByHash(db: Queryable, keyHash: string): Promise<KeyOwner | undefined> {
  const [key] = await keyStatement(db, "key", keyHash);
  return key;
}

// Compiled once and prepared (compiled-once.ts): a cache miss is a request's first statement.
const keyStatement = compiledOnce((k, _shape, keyHash: string) =>
  k.selectFrom("api_keys").select(["key_hash as keyHash", "user_id as userId", "revoked_at as revokedAt"]).where("key_hash", "=", keyHash),
);

export async function insertApiKey(db: Queryable, key: { id: string; userId: string; keyHash: string }): Promise<void> {
  await db.$kysely.insertInto("api_keys").values({ id: key.id, user_id: key.userId, key_hash: key.keyHash }).execute();
}

export type KeyRef = { id: string } | { keyHash: string };

/**
 * Revokes the key unless it already is; false when there is no such key (revoking twice is fine).
 * The api_keys trigger tells every gateway at the commit (key-revocations.ts).
 */
export async function revokeApiKey(db: Queryable, ref: KeyRef): Promise<boolean> {
  const column = "id" in ref ? "id" : "key_hash";
  const value = "id" in ref ? ref.id : ref.keyHash;
  const revoked = await db.$kysely
    .updateTable("api_keys")
    .set({ revoked_at: new Date() })
    .where(column, "=", value)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  if (revoked.numUpdatedRows > 0n) return true;
  return (await db.$kysely.selectFrom("api_keys").select("id").where(column, "=", value).executeTakeFirst()) !== undefined;
}

/** A user's keys, oldest first, by id (the key itself is never stored). */
export async function listApiKeys(db: Queryable, userId: string): Promise<Array<{ id: string; createdAt: Date; revokedAt: Date | null }>> {
  return db.$kysely
    .selectFrom("api_keys")
    .select(["id", "created_at as createdAt", "revoked_at as revokedAt"])
    .where("user_id", "=", userId)
    .orderBy("created_at")
    .execute();
}
