import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createDatabase } from "@gen/db";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../..");

/**
 * A database of its own, migrated with the real migrations. The reconciler scans every delivery
 * in its database, so a test of it must not share one with test files that run at the same time.
 */
export async function createIsolatedDatabase(baseUrl = process.env.DATABASE_URL!): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `gen_dlv_${randomBytes(4).toString("hex")}`;
  const admin = createDatabase(baseUrl);
  await admin.$executeRawUnsafe(`CREATE DATABASE ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  execFileSync("pnpm", ["exec", "prisma", "migrate", "deploy"], { cwd: repoRoot, env: { ...process.env, DATABASE_URL: url.toString() }, stdio: "pipe" });
  return {
    url: url.toString(),
    async drop() {
      await admin.$executeRawUnsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.$disconnect();
    },
  };
}
