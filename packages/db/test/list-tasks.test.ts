import { createDatabase, listTasks, type Database, type TaskListQuery } from "@gen/db";
import { createScratchDatabase, type ScratchDatabase } from "../../../test/support/scratch-database.ts";

// A database of its own: the plan test loads tens of thousands of tasks and analyzes the table.
let scratch: ScratchDatabase;
let db: Database;
let captured: { sql: string; values: readonly unknown[] }[] = [];
const USERS = 50;
const PER_USER = 400;
const SAME_MS = 5;
const base = Date.parse("2026-11-01T00:00:00.000Z");

beforeAll(async () => {
  scratch = await createScratchDatabase();
  db = createDatabase(scratch.url, { onQuery: (sql, values) => captured.push({ sql, values }) });
  // Task n of user u is created at base + n seconds; the first SAME_MS tasks of each user share
  // one millisecond, so the order's tie-break on id is exercised.
  await db.$sql.query(
    "INSERT INTO users (id, credits) SELECT 'usr_' || u, 0 FROM generate_series(1, $1) u",
    [USERS],
  );
  await db.$sql.query(
    `INSERT INTO tasks (id, user_id, endpoint, model, status, input, request_id, billing_method, reserved_credits, created_at, updated_at, discarded_at)
     SELECT 'task_' || md5(u || '-' || n), 'usr_' || u,
            CASE WHEN n % 2 = 0 THEN 'images' ELSE 'detect' END,
            CASE WHEN n % 2 = 0 THEN 'sim-image-1' ELSE 'sim-detect-1' END,
            CASE WHEN n % 10 = 0 THEN 'failed' ELSE 'completed' END,
            '{}'::jsonb, 'req_x', 'flat', 1,
            to_timestamp(($3::bigint + greatest(n, $4) * 1000) / 1000.0),
            now(),
            CASE WHEN n = 7 THEN now() END
       FROM generate_series(1, $1) u, generate_series(1, $2) n`,
    [USERS, PER_USER, base, SAME_MS],
  );
  await db.$sql.query("ANALYZE tasks");
});
afterAll(async () => {
  await db.$disconnect();
  await scratch.drop();
});

async function all(query: Omit<TaskListQuery, "limit" | "after">, limit = 33) {
  const seen = [];
  let after: TaskListQuery["after"];
  for (;;) {
    const page = await listTasks(db, { ...query, limit, after });
    seen.push(...page);
    if (page.length < limit) return seen;
    const last = page.at(-1)!;
    after = { createdAt: last.createdAt, id: last.id };
  }
}

test("pages walk the user's own tasks newest first, each once, ties broken by id, discarded ones left out", async () => {
  const tasks = await all({ userId: "usr_3" });
  expect(tasks).toHaveLength(PER_USER - 1);
  expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
  expect(tasks.every((t) => t.userId === "usr_3" && t.discardedAt === null)).toBe(true);
  for (let i = 1; i < tasks.length; i++) {
    const [a, b] = [tasks[i - 1]!, tasks[i]!];
    const order = b.createdAt.getTime() - a.createdAt.getTime() || (b.id < a.id ? -1 : 1);
    expect(order).toBeLessThan(0);
  }
});

test("filters combine; the time range is [after, before)", async () => {
  const failedImages = await all({ userId: "usr_4", status: "failed", endpoint: "images", model: "sim-image-1" }, 7);
  expect(failedImages).toHaveLength(PER_USER / 10);
  expect(failedImages.every((t) => t.status === "failed" && t.endpoint === "images")).toBe(true);
  const range = await all({ userId: "usr_4", createdAfter: new Date(base + 100_000), createdBefore: new Date(base + 200_000) });
  expect(range.map((t) => t.createdAt.getTime())).toEqual(Array.from({ length: 100 }, (_, i) => base + 199_000 - i * 1000));
  expect(await listTasks(db, { userId: "usr_nobody", limit: 10 })).toEqual([]);
});

test("the statement walks the (user_id, created_at, id) index from the position, never a scan of the table", async () => {
  captured = [];
  const first = await listTasks(db, { userId: "usr_9", limit: 20 });
  const last = first.at(-1)!;
  await listTasks(db, { userId: "usr_9", limit: 20, status: "failed", after: { createdAt: last.createdAt, id: last.id } });
  const statements = [...captured];
  expect(statements).toHaveLength(2);
  const [plain, filtered] = await Promise.all(statements.map((s) => plan(s)));
  // Unfiltered: the index in the listing's order, stopping after the page: nothing sorted.
  expect(plain).toContain("Index Scan Backward using tasks_user_id_created_at_id_idx");
  expect(plain).not.toMatch(/Sort|Seq Scan/);
  // With a filter the planner may combine indexes; the position is still an index condition,
  // never a filter over rows already read.
  expect(filtered).not.toContain("Seq Scan");
  expect(filtered).toMatch(/Index Cond: \(\(user_id = 'usr_9'::text\) AND \(ROW\(created_at, id\) </);
});

async function plan(statement: { sql: string; values: readonly unknown[] }): Promise<string> {
  const { rows } = await db.$sql.query<{ "QUERY PLAN": string }>(`EXPLAIN ${statement.sql}`, [...statement.values]);
  return rows.map((r) => r["QUERY PLAN"]).join("\n");
}
