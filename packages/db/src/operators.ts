import type { Row } from "./camel-row.ts";
import type { Queryable } from "./queryable.ts";

// Every statement on `operators` (the console's accounts, managed by the admin CLI).

export type Operator = Row<"operators">;

const OPERATOR_SELECTION = ["id", "email", "password_hash as passwordHash", "created_at as createdAt", "disabled_at as disabledAt"] as const;

export async function findOperatorByEmail(db: Queryable, email: string): Promise<Operator | undefined> {
  return db.$kysely.selectFrom("operators").select(OPERATOR_SELECTION).where("email", "=", email).executeTakeFirst();
}

export async function findOperatorById(db: Queryable, id: string): Promise<Operator | undefined> {
  return db.$kysely.selectFrom("operators").select(OPERATOR_SELECTION).where("id", "=", id).executeTakeFirst();
}

export async function insertOperator(db: Queryable, operator: { id: string; email: string; passwordHash: string }): Promise<void> {
  await db.$kysely.insertInto("operators").values({ id: operator.id, email: operator.email, password_hash: operator.passwordHash }).execute();
}

/**
 * Sets the password hash; `disabled: false` also re-enables the account (a reset). With `ifHash`,
 * only while the stored hash is still that one (a rehash at sign-in loses to a reset that ran
 * meanwhile). Says whether a row changed.
 */
export async function updateOperatorPassword(
  db: Queryable,
  where: { email: string } | { id: string; ifHash: string },
  passwordHash: string,
  enable: boolean,
): Promise<boolean> {
  let query = db.$kysely.updateTable("operators").set(enable ? { password_hash: passwordHash, disabled_at: null } : { password_hash: passwordHash });
  query = "email" in where ? query.where("email", "=", where.email) : query.where("id", "=", where.id).where("password_hash", "=", where.ifHash);
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Says whether such an operator exists (disabling twice is fine). */
export async function disableOperator(db: Queryable, email: string): Promise<boolean> {
  const result = await db.$kysely.updateTable("operators").set({ disabled_at: new Date() }).where("email", "=", email).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
