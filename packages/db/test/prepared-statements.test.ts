import { sql } from "kysely";
import { createDatabase, findKeyByHash, findTask, inTransaction, type Queryable } from "@gen/db";
import { newTaskId } from "@gen/ids";
import { createScratchDatabase } from "../../../test/support/scratch-database.ts";

// The hot statements go out as named prepared statements, parsed once per connection. One
// connection per pool here, so every statement of a test meets what the ones before left on it.
const url = process.env.DATABASE_URL!;
const pools: Array<ReturnType<typeof createDatabase>> = [];
const open = (target = url) => {
  const db = createDatabase(target, { max: 1 });
  pools.push(db);
  return db;
};
afterAll(() => Promise.all(pools.map((db) => db.$disconnect())));

const prepared = async (db: Queryable) =>
  (await sql<{ name: string }>`SELECT name FROM pg_prepared_statements ORDER BY name`.execute(db.$kysely)).rows.map((row) => row.name);

test("a compiled-once statement is prepared on the connection once, inside a transaction or not", async () => {
  const db = open();
  const id = newTaskId();
  await findTask(db, id);
  await findTask(db, id);
  const names = await prepared(db);
  expect(names).toHaveLength(1);
  expect(names[0]).toMatch(/^gen_[0-9a-f]{16}$/);
  // A transaction's Kysely compiles the same text: the same name, no second parse.
  await inTransaction(db, async (tx) => {
    await findTask(tx, id);
    await findKeyByHash(tx, "no such hash");
    expect(await prepared(tx)).toHaveLength(2);
  });
});

test("a statement error, or a first use inside a failed transaction, leaves the statement usable", async () => {
  const db = open();
  const id = newTaskId();
  await findTask(db, id);
  await expect(
    inTransaction(db, async (tx) => {
      await findTask(tx, id);
      await sql`SELECT 1 / 0`.execute(tx.$kysely);
    }),
  ).rejects.toThrow(/division by zero/);
  expect(await findTask(db, id)).toBeUndefined();
  // Its parse refused by the aborted transaction: pg must not take the name as parsed.
  await expect(
    inTransaction(db, async (tx) => {
      await sql`SELECT 1 / 0`.execute(tx.$kysely).catch(() => undefined);
      await findKeyByHash(tx, "no such hash");
    }),
  ).rejects.toThrow(/current transaction is aborted/);
  expect(await findKeyByHash(db, "no such hash")).toBeUndefined();
  expect(await prepared(db)).toHaveLength(2);
});

test("pgbouncer=true in the URL (a transaction-mode pooler) sends every statement unnamed", async () => {
  const target = new URL(url);
  target.searchParams.set("pgbouncer", "true");
  const db = open(target.toString());
  await findTask(db, newTaskId());
  expect(await prepared(db)).toEqual([]);
});

test("a migration changing a returned column's type costs one failed statement per connection, not the connection's life", async () => {
  const scratch = await createScratchDatabase();
  try {
    const db = createDatabase(scratch.url, { max: 1 });
    await findKeyByHash(db, "no such hash");
    await sql`ALTER TABLE api_keys ALTER COLUMN revoked_at TYPE timestamp(3)`.execute(db.$kysely);
    await expect(findKeyByHash(db, "no such hash")).rejects.toMatchObject({ code: "0A000" });
    expect(await findKeyByHash(db, "no such hash")).toBeUndefined();
    await db.$disconnect();
  } finally {
    await scratch.drop();
  }
});
