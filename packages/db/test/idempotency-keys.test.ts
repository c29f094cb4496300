import { IDEMPOTENCY_WINDOW_MS, createDatabase, purgeExpiredIdempotencyKeys, type Database, readCredits } from "@gen/db";
import { createScratchDatabase, type ScratchDatabase } from "../../../test/support/scratch-database.ts";

// A database of its own: the purge scans the whole table, and other test files keep keys there.
let scratch: ScratchDatabase;
let db: Database;
beforeAll(async () => {
  scratch = await createScratchDatabase();
  db = createDatabase(scratch.url);
});
afterAll(async () => {
  await db.$disconnect();
  await scratch.drop();
});

const now = new Date("2026-11-23T12:00:00.000Z");
const ago = (ms: number) => new Date(now.getTime() - ms);

async function insertKeys(prefix: string, count: number, createdAt: Date): Promise<void> {
  await db.$kysely
    .insertInto("idempotency_keys")
    .values(
      Array.from({ length: count }, (_, i) => ({
        user_id: "usr_purge",
        key: `${prefix}-${i}`,
        request_hash: "h",
        task_id: `task_${i}`,
        created_at: createdAt,
      })),
    )
    .execute();
}

test("keys past the 24 h window go, in bounded batches; keys inside it stay", async () => {
  await insertKeys("old", 25, ago(IDEMPOTENCY_WINDOW_MS + 60_000));
  await insertKeys("edge", 3, ago(IDEMPOTENCY_WINDOW_MS - 1000));
  await insertKeys("fresh", 4, ago(1000));

  // Two batches of 10 per run: a backlog drains over runs, never in one long statement.
  expect(await purgeExpiredIdempotencyKeys(db, { batchSize: 10, maxBatches: 2, now })).toBe(20);
  expect(await purgeExpiredIdempotencyKeys(db, { batchSize: 10, maxBatches: 2, now })).toBe(5);
  expect(await purgeExpiredIdempotencyKeys(db, { batchSize: 10, maxBatches: 2, now })).toBe(0);

  const left = (await db.$kysely.selectFrom("idempotency_keys").select("key").where("key", "not like", "many-%").execute()).map((k) => k.key.split("-")[0]);
  expect(left.sort()).toEqual(["edge", "edge", "edge", "fresh", "fresh", "fresh", "fresh"]);
});

test("the purge finds old keys through the created_at index, not a scan of the table", async () => {
  await insertKeys("many", 5000, ago(1000));
  await db.$sql.query("ANALYZE idempotency_keys");
  const { rows } = await db.$sql.query<{ "QUERY PLAN": string }>(
    "EXPLAIN SELECT ctid FROM idempotency_keys WHERE created_at < now() ORDER BY created_at LIMIT 1000",
  );
  expect(rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("idempotency_keys_created_at_idx");
});

test("a balance can never go below zero, whatever statement tries", async () => {
  await db.$kysely.insertInto("users").values({ id: "usr_nonneg", credits: 5 }).execute();
  await expect(db.$sql.query("UPDATE users SET credits = credits - 6 WHERE id = 'usr_nonneg'")).rejects.toMatchObject({
    code: "23514",
    constraint: "users_credits_nonnegative",
  });
  expect(await readCredits(db, "usr_nonneg")).toBe(5);
});
