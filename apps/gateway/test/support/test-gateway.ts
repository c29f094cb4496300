import { setTimeout as delay } from "node:timers/promises";
import { loadConfig, type Config } from "@gen/config";
import { createDatabase, ensureUser, inTransaction, insertApiKey, readCredits, revokeApiKey, type Database } from "@gen/db";
import { hashApiKey, newApiKey, newKeyId, newUserId } from "@gen/ids";
import { checkLedger, grantCredits } from "@gen/ledger";
import { createLogger } from "@gen/logger";
import { createApp } from "../../src/create-app.ts";
import { buildDeps, closeDeps } from "../../src/services/build-deps.ts";
import type { GatewayDeps } from "../../src/services/gateway-deps.ts";
import { deletePrefixAt } from "../../../../test/support/redis-keys.ts";
import { testPrefix } from "../../../../test/support/run-scope.ts";

export interface TestGateway {
  app: ReturnType<typeof createApp>;
  deps: GatewayDeps;
  close(): Promise<void>;
}

/**
 * A real gateway on the real PostgreSQL (the run's test database) and Redis, with its own
 * QUEUE_PREFIX so test files never see each other's jobs or rate-limit counters.
 */
export async function createTestGateway(
  env: Record<string, string> = {},
  patch: (deps: GatewayDeps) => Partial<GatewayDeps> = () => ({}),
): Promise<TestGateway> {
  const ownsPrefix = env.QUEUE_PREFIX === undefined;
  const config: Config = loadConfig({
    DATABASE_URL: process.env.DATABASE_URL,
    QUEUE_PREFIX: testPrefix("test"),
    POLL_RATE_PER_SEC: "10000",
    POLL_RATE_BURST: "10000",
    SUBMIT_RATE_PER_SEC: "10000",
    SUBMIT_RATE_BURST: "10000",
    BAD_KEY_RATE_PER_MIN: "600000",
    BAD_KEY_BURST: "10000",
    STORAGE_DIR: "var/test-storage",
    ...env,
  });
  const base = buildDeps(config, createLogger("gateway-test", "silent"));
  const deps = { ...base, ...patch(base) };
  // The real gateway checks Redis before it listens; request connections fail fast until ready.
  await Promise.all(
    [base.redis, deps.redis, base.limiterRedis].map((redis) =>
      redis.status === "ready" ? undefined : Promise.race([new Promise((resolve) => redis.once("ready", resolve)), delay(1000)]),
    ),
  );
  // Its key cache is off until its revocation listener is connected (tests that count key reads need it on).
  for (let waited = 0; !deps.keyRevocations.listening && waited < 5000; waited += 20) await delay(20);
  return {
    app: createApp(deps),
    deps,
    async close() {
      // Bounded: a queue on a dead Redis (failure tests) would wait for a connection forever.
      await closeDeps(deps);
      if (deps.db !== base.db) await base.db.$disconnect();
      if (deps.redis !== base.redis) base.redis.disconnect();
      // Everything under its prefix (jobs, limiter counters, tickets), bounded: a failure test's Redis may be gone.
      // A prefix passed in is shared with another instance still running: its owner deletes it.
      if (ownsPrefix) await deletePrefixAt(config.redisUrl, config.queuePrefix, 2000).catch(() => {});
    },
  };
}

export interface TestUser {
  userId: string;
  apiKey: string;
  auth: string;
}

/** A user with a key and a starting balance written as a ledger grant, like the admin CLI does. */
export async function createUser(db: Database, credits = 1000): Promise<TestUser> {
  const userId = newUserId();
  const apiKey = newApiKey();
  await inTransaction(db, async (tx) => {
    await ensureUser(tx, userId);
    await grantCredits(tx, userId, credits);
    await insertApiKey(tx, { id: newKeyId(), userId, keyHash: hashApiKey(apiKey) });
  });
  return { userId, apiKey, auth: `Bearer ${apiKey}` };
}

/**
 * Revokes a user's key as `pnpm admin revoke-key` does (one UPDATE, whose commit notifies every
 * gateway process), then waits until each gateway given has had the notice: it follows the commit
 * by the notice's latency (docs/internals.md "Caches in the gateway"), which a loaded machine can
 * stretch past the next request sent from this same process.
 */
export async function revokeKeys(user: TestUser, ...gateways: TestGateway[]): Promise<void> {
  const keyHash = hashApiKey(user.apiKey);
  await revokeApiKey(gateways[0]!.deps.db, { keyHash });
  for (let waited = 0; gateways.some((gw) => gw.deps.keyCache.get(keyHash) !== undefined); waited += 10) {
    if (waited > 10_000) throw new Error("no revocation notice within 10 s");
    await delay(10);
  }
}

/** Balance and task count of a user: what a refused request must leave untouched. */
export async function snapshot(db: Database, userId: string) {
  const count = (table: "tasks" | "ledger_entries") =>
    db.$kysely
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("user_id", "=", userId)
      .executeTakeFirstOrThrow()
      .then((row) => Number(row.n));
  const [credits, tasks, ledger] = await Promise.all([readCredits(db, userId), count("tasks"), count("ledger_entries")]);
  return { credits: credits!, tasks, ledger };
}

/** The user's tasks a poll can see (a discarded submission's task is hidden). */
export async function visibleTaskCount(db: Database, userId: string): Promise<number> {
  const row = await db.$kysely
    .selectFrom("tasks")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("user_id", "=", userId)
    .where("discarded_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * docs/api.md#credits-and-refunds: a balance equals the sum of its ledger, and every settled task has
 * reserve = charge + refund; the whole invariant as `pnpm admin ledger-check --user` checks it.
 */
export async function expectLedgerInvariant(db: Database, userId: string): Promise<void> {
  const credits = await readCredits(db, userId);
  const sum = await db.$kysely
    .selectFrom("ledger_entries")
    .select((eb) => eb.fn.sum<string | null>("delta").as("sum"))
    .where("user_id", "=", userId)
    .executeTakeFirstOrThrow();
  expect(Number(sum.sum ?? 0)).toBe(credits);
  expect(await checkLedger(db, { userId })).toEqual([]);
}

export const testDatabase = (): Database => createDatabase(process.env.DATABASE_URL!);
