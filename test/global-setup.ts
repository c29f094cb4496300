import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import pg from "pg";

// Current compiled output, and one fresh database per test run, migrated with the real migrations;
// test files isolate from each other with their own users and their own QUEUE_PREFIX. The run's id
// (TEST_RUN_ID) goes into every key prefix and scratch database the run makes (support/run-scope.ts),
// so the teardown can tell what this run left on the shared servers (global-teardown.ts).
export default async function globalSetup(): Promise<void> {
  // Tests run the sources; the ones that run `pnpm start` or the production directory run dist/.
  // Rebuilds only the packages whose src/ changed since the last `pnpm build` (none: ~0.1 s).
  execFileSync(process.execPath, ["scripts/build.mjs", "--if-stale"], { stdio: "inherit" });
  const runId = randomBytes(4).toString("hex");
  process.env.TEST_RUN_ID = runId;
  const admin = process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
  const name = `gen_test_r${runId}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  process.env.DATABASE_URL = url.toString();
  process.env.TEST_DATABASE_NAME = name;
  execFileSync("pnpm", ["exec", "prisma", "migrate", "deploy"], { env: process.env, stdio: "pipe" });
}
