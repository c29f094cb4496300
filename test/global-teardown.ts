import pg from "pg";
import { createRedis } from "@gen/queues";
import { countKeysPerPrefix, deleteKeys } from "./support/redis-keys.ts";
import { runKeyPattern } from "./support/run-scope.ts";

/**
 * Drops the run's database, then fails the run if a test left anything on the shared servers:
 * Redis keys under this run's prefixes, or scratch databases of this run (both carry TEST_RUN_ID,
 * so keys and databases of other runs on the same servers never count). What it finds is listed,
 * then removed, so one failing run does not leave it for the next. Never FLUSHDB: the Redis is shared.
 */
export default async function globalTeardown(): Promise<void> {
  const runId = process.env.TEST_RUN_ID;
  const name = process.env.TEST_DATABASE_NAME;
  const keep = Boolean(process.env.KEEP_TEST_DATABASE);
  const left: string[] = [];

  const client = new pg.Client({ connectionString: process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" });
  await client.connect();
  try {
    if (name && !keep) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    if (runId) {
      const { rows } = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY datname", [
        `gen\\_scratch\\_r${runId}\\_%`,
      ]);
      for (const { datname } of rows) {
        left.push(`database ${datname}`);
        if (!keep) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
      }
    }
  } finally {
    await client.end();
  }

  if (runId) {
    const redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", "request");
    try {
      if (redis.status !== "ready") await new Promise((resolve, reject) => redis.once("ready", resolve).once("error", reject));
      const pattern = runKeyPattern(runId);
      const counts = await countKeysPerPrefix(redis, pattern);
      for (const [prefix, count] of [...counts].sort()) left.push(`${count} Redis keys under ${prefix}:`);
      if (counts.size > 0) await deleteKeys(redis, pattern);
    } finally {
      redis.disconnect();
    }
  }

  if (left.length > 0) {
    throw new Error(
      `the tests left behind (each test removes what it wrote, also when it fails; the prefix's kind names the harness):\n  ${left.join("\n  ")}`,
    );
  }
}
