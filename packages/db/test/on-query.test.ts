import { createDatabase } from "@gen/db";
import { newUserId } from "@gen/ids";

// bench/data-scale.ts replays what the code sends under EXPLAIN: the hook must see the values
// bound to each statement, on the plain-SQL pool (its text and its tagged template) and through
// Kysely alike.
const seen: Array<{ sql: string; values: unknown[] }> = [];
const db = createDatabase(process.env.DATABASE_URL!, { onQuery: (sql, values) => seen.push({ sql, values }) });
afterAll(() => db.$disconnect());

test("onQuery gets every statement with its bound values", async () => {
  const userId = newUserId();
  await db.$sql.query("SELECT id FROM users WHERE id = $1 AND credits >= $2", [userId, 0]);
  expect(seen.at(-1)).toEqual({ sql: "SELECT id FROM users WHERE id = $1 AND credits >= $2", values: [userId, 0] });
  await db.$sql.rows`SELECT id FROM users WHERE id = ${userId}`;
  expect(seen.at(-1)).toEqual({ sql: "SELECT id FROM users WHERE id = $1", values: [userId] });
  await db.$kysely.selectFrom("users").select("id").where("id", "=", userId).execute();
  expect(seen.at(-1)).toEqual({ sql: 'select "id" from "users" where "id" = $1', values: [userId] });
  // A statement without values, and a hostile value: passed as given, never spliced into the text.
  await db.$sql.query("SELECT 1");
  expect(seen.at(-1)).toEqual({ sql: "SELECT 1", values: [] });
  await db.$sql.query("SELECT count(*) FROM users WHERE id = $1", ["x'; DROP TABLE users; --"]);
  expect(seen.at(-1)!.values).toEqual(["x'; DROP TABLE users; --"]);
});
