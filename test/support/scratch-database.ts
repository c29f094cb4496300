import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { scratchDatabaseName } from "./run-scope.ts";

const MIGRATIONS = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), "../../prisma/migrations");

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A database of its own for tests whose subject scans whole tables (reconcilers): built from the
 * real migration files, so it is the same schema `pnpm db:migrate` produces. `serverUrl` names the
 * server (the fault suite's private PostgreSQL); by default the run's.
 */
export async function createScratchDatabase(serverUrl = process.env.DATABASE_URL!): Promise<ScratchDatabase> {
  const base = new URL(serverUrl);
  const name = scratchDatabaseName();
  const admin = new URL(base);
  admin.pathname = "/postgres";
  const adminClient = new pg.Client({ connectionString: admin.toString() });
  await adminClient.connect();
  await adminClient.query(`CREATE DATABASE ${name}`);
  await adminClient.end();

  const url = new URL(base);
  url.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  const dirs = readdirSync(MIGRATIONS, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  for (const dir of dirs) await client.query(readFileSync(path.join(MIGRATIONS, dir, "migration.sql"), "utf8"));
  await client.end();

  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin.toString() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
