import { createDatabase } from "@gen/db";

// The pool's size is what PostgreSQL sees: as many server backends as `max`, however many
// statements are waiting for one. Counted by the backends' own pids, not by the pool's settings.
const url = process.env.DATABASE_URL!;

async function backendsFor(max: number | undefined, statements: number): Promise<number> {
  const db = createDatabase(url, max === undefined ? {} : { max });
  try {
    const rows = await Promise.all(Array.from({ length: statements }, () => db.$sql.rows<{ pid: number }>`SELECT pg_backend_pid() AS pid, pg_sleep(0.2)`));
    return new Set(rows.map(([row]) => row!.pid)).size;
  } finally {
    await db.$disconnect();
  }
}

test("a pool of 3 serves 5 concurrent statements on 3 connections", async () => {
  expect(await backendsFor(3, 5)).toBe(3);
});

test("the default pool is 10 connections", async () => {
  expect(await backendsFor(undefined, 12)).toBe(10);
});
