import { sql } from "kysely";
import type { Queryable } from "./queryable.ts";

/** Start-up check: throws an Error whose message is one line an operator can act on. */
export async function checkDatabase(db: Queryable, url: string): Promise<void> {
  const where = describe(url);
  try {
    await pingDatabase(db);
  } catch (error) {
    throw new Error(`PostgreSQL does not answer at ${where} (DATABASE_URL): ${reason(error)}`, { cause: error });
  }
  try {
    await db.$kysely
      .selectFrom("tasks")
      .select(sql<number>`1`.as("one"))
      .limit(0)
      .execute();
  } catch {
    throw new Error(`PostgreSQL at ${where} has no schema: run \`pnpm db:migrate\``);
  }
}

/** One round trip; throws when PostgreSQL does not answer (readiness probes). */
export async function pingDatabase(db: Queryable): Promise<void> {
  await sql`SELECT 1`.execute(db.$kysely);
}

function describe(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`;
  } catch {
    return "an invalid URL";
  }
}

function reason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (
    text
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean)
      .pop() ?? "unknown error"
  );
}
