import { setTimeout as delay } from "node:timers/promises";
import { loadConfig, type Config } from "@gen/config";
import { newUserId } from "@gen/ids";
import type { Database } from "@gen/db";
import { createLogger } from "@gen/logger";
import { createConsoleApp } from "../../src/console-app.ts";
import { buildConsoleDeps, closeConsoleDeps, type ConsoleDeps } from "../../src/console-deps.ts";
import { deletePrefixAt } from "../../../../test/support/redis-keys.ts";
import { testPrefix } from "../../../../test/support/run-scope.ts";

export interface TestConsole {
  app: ReturnType<typeof createConsoleApp>;
  deps: ConsoleDeps;
  close(): Promise<void>;
}

/**
 * The console as `pnpm start:console` runs it, on the real PostgreSQL (the run's test database)
 * and Redis, with its own QUEUE_PREFIX so test files never see each other's sessions, jobs or
 * rate-limit counters.
 */
export async function createTestConsole(
  env: Record<string, string> = {},
  patch: (deps: ConsoleDeps) => Partial<ConsoleDeps> = () => ({}),
): Promise<TestConsole> {
  const ownsPrefix = env.QUEUE_PREFIX === undefined;
  const config: Config = loadConfig({
    DATABASE_URL: process.env.DATABASE_URL,
    QUEUE_PREFIX: testPrefix("test"),
    CONSOLE_BASE_URL: "http://localhost:8081",
    ...env,
  });
  const base = buildConsoleDeps(config, createLogger("console-test", "silent"));
  const deps = { ...base, ...patch(base) };
  // The real console checks Redis before it listens; request connections fail fast until ready.
  await Promise.all(
    [base.redis, deps.redis].map((redis) =>
      redis.status === "ready" ? undefined : Promise.race([new Promise((resolve) => redis.once("ready", resolve)), delay(1000)]),
    ),
  );
  return {
    app: createConsoleApp(deps),
    deps,
    async close() {
      await closeConsoleDeps(deps);
      if (deps.db !== base.db) await base.db.$disconnect();
      if (deps.redis !== base.redis) base.redis.disconnect();
      // Everything under its prefix (sessions, jobs, counters), bounded: a failure test's Redis may be gone.
      // A prefix passed in is shared with another instance still running: its owner deletes it.
      if (ownsPrefix) await deletePrefixAt(config.redisUrl, config.queuePrefix, 2000).catch(() => {});
    },
  };
}

/** A user to own seeded tasks (the console never authenticates API users). */
export async function createUser(db: Database, credits = 1000): Promise<{ userId: string }> {
  const userId = newUserId();
  await db.$kysely.insertInto("users").values({ id: userId, credits }).execute();
  return { userId };
}
