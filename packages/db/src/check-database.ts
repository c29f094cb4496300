import type { Database } from "./create-database.ts";

/** Start-up check: throws an Error whose message is one line an operator can act on. */
export async function checkDatabase(db: Database, url: string): Promise<void> {
  const where = describe(url);
  try {
    await db.$queryRaw`SELECT 1`;
  } catch (error) {
    throw new Error(`PostgreSQL does not answer at ${where} (DATABASE_URL): ${reason(error)}`, { cause: error });
  }
  try {
    await db.$queryRaw`SELECT 1 FROM tasks LIMIT 0`;
  } catch {
    throw new Error(`PostgreSQL at ${where} has no schema: run \`pnpm db:migrate\``);
  }
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
  return text.split("\n").map((line) => line.trim()).filter(Boolean).pop() ?? "unknown error";
}
