import pg from "pg";
import request from "supertest";
import { createDatabase } from "@gen/db";
import { createScratchDatabase, type ScratchDatabase } from "../../../test/support/scratch-database.ts";
import { createTestGateway, createUser, type TestGateway } from "./support/test-gateway.ts";

// A poll with ?include=webhook shows the task and its delivery as of one instant: the task's
// terminal commit and the delivery's are never seen half (a running task beside a delivered webhook).
// A scratch database: the test locks a table, which would stall every other test file's attempts.
let database: ScratchDatabase;
let gw: TestGateway;
let locker: pg.Client;
let writer: pg.Client;

beforeAll(async () => {
  database = await createScratchDatabase();
  gw = await createTestGateway({ DATABASE_URL: database.url });
  locker = new pg.Client({ connectionString: database.url });
  writer = new pg.Client({ connectionString: database.url });
  await Promise.all([locker.connect(), writer.connect()]);
});
afterAll(async () => {
  await Promise.all([locker.end(), writer.end()]);
  await gw.close();
  await database.drop();
});

test("a task and its delivery committed together, between a poll's start and its end: the poll shows both or neither", async () => {
  const user = await createUser(gw.deps.db);
  const submitted = await request(gw.app)
    .post("/api/v1/images/generations")
    .set("Authorization", user.auth)
    .send({ model: "sim-image-1", prompt: "one instant", webhook_url: "https://example.com/h" });
  expect(submitted.status).toBe(202);
  const id = submitted.body.id as string;

  // The poll's read waits on a lock of the attempt log (read for the delivering attempt); the
  // commit below touches only the task and the delivery, so it goes through meanwhile.
  await locker.query("BEGIN");
  await locker.query("LOCK TABLE webhook_attempts IN ACCESS EXCLUSIVE MODE");
  const poll = request(gw.app)
    .get(`/api/v1/tasks/${id}?include=webhook`)
    .set("Authorization", user.auth)
    .then((res) => res);
  await waitForLockWait(database.url);

  await writer.query("BEGIN");
  await writer.query(`UPDATE tasks SET status = 'completed', output = '{"data": []}', started_at = now(), finished_at = now() WHERE id = $1`, [id]);
  await writer.query(
    `UPDATE webhook_deliveries SET status = 'delivered', attempts = 1, response_status = 200, last_attempt_at = now(), delivered_at = now() WHERE task_id = $1`,
    [id],
  );
  await writer.query("COMMIT");
  await locker.query("ROLLBACK");

  const res = await poll;
  expect(res.status).toBe(200);
  // Read after both commits (the lock held the whole read back): both show, never one of the two.
  expect({ task: res.body.status, webhook: res.body.webhook.status }).toEqual({ task: "completed", webhook: "delivered" });
});

/** Resolves once some backend of `url`'s database waits for a lock (the poll's read). */
async function waitForLockWait(url: string): Promise<void> {
  const db = createDatabase(url);
  try {
    for (let i = 0; i < 200; i++) {
      const waiting = await db.$sql
        .query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
        .then((result) => result.rows);
      if (waiting[0]!.n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error("the poll never waited for the lock");
  } finally {
    await db.$disconnect();
  }
}
