import request from "supertest";
import { createDatabase } from "@gen/db";
import { countCalls } from "../../../test/support/count-calls.ts";
import { monitorRedis } from "../../../test/support/redis-monitor.ts";
import { createSubmitter } from "../src/services/submit-task.ts";
import { createTestGateway, createUser, type TestGateway } from "./support/test-gateway.ts";

// The submit path's cost, counted on the wire: SQL statements seen by Prisma and Redis commands
// seen by MONITOR for this test's key prefix.
let gw: TestGateway;
const statements: string[] = [];

beforeAll(async () => {
  gw = await createTestGateway({}, () => ({ db: createDatabase(process.env.DATABASE_URL!, { onQuery: (sql) => statements.push(sql) }) }));
});
afterAll(() => gw.close());

test("one submission statement, one rate-limit call and one enqueue call (the key cached)", async () => {
  const user = await createUser(gw.deps.db, 1000);
  const body = { model: "sim-image-1", prompt: "count me", webhook_url: "https://example.com/h" };
  // Warm up: BullMQ loads its scripts and reads the server version on first use.
  await request(gw.app).post("/api/v1/images/generations").set("Authorization", user.auth).send(body);

  const monitor = await monitorRedis(6379, gw.deps.config.queuePrefix);
  await new Promise((resolve) => setTimeout(resolve, 100));
  statements.length = 0;

  const res = await request(gw.app).post("/api/v1/images/generations").set("Authorization", user.auth).send(body);
  expect(res.status).toBe(202);
  await new Promise((resolve) => setTimeout(resolve, 200));
  monitor.stop();

  // No API-key lookup (the warm-up left the key in this process's cache, which its revocation
  // listener keeps honest), then ONE statement that debits, inserts the task, its ledger row and
  // its webhook state (no BEGIN/COMMIT round trips), nothing after.
  const sql = statements.map((s) => s.trim().split(/\s+/)[0]!.toUpperCase());
  expect(sql).toEqual(["WITH"]);
  expect(statements[0]).toMatch(/update "?users"?[\s\S]*insert into "?tasks"?[\s\S]*insert into "?ledger_entries"?[\s\S]*insert into "?webhook_deliveries"?/i);

  // One EVALSHA for the rate limit, one for BullMQ's addJob script.
  // (The enqueue is an addBulk of one job: MULTI and EXEC carry no key, so only its script shows.)
  expect(monitor.commands.map((command) => command.toLowerCase())).toEqual(["evalsha", "evalsha"]);
  process.stdout.write(`submit path: ${statements.length} SQL statements (${sql.join(" ")}), Redis: ${monitor.commands.length} calls\n`);
});

test("a poll: one task select and one rate-limit call; a finished task: the rate-limit call only", async () => {
  const user = await createUser(gw.deps.db, 1000);
  const submitted = await request(gw.app).post("/api/v1/images/generations").set("Authorization", user.auth).send({ model: "sim-image-1", prompt: "poll me" });
  const path = `/api/v1/tasks/${submitted.body.id}`;
  const count = async () => {
    statements.length = 0;
    expect((await request(gw.app).get(path).set("Authorization", user.auth)).status).toBe(200);
    return statements.map((s) => s.trim().split(/\s+/)[0]!.toUpperCase());
  };
  // The key is cached since the submission: no api_keys read.
  expect(await count()).toEqual(["SELECT"]);
  expect(statements[0]).toMatch(/from "?tasks"?/i);
  await gw.deps.db.$kysely
    .updateTable("tasks")
    .set({ status: "completed", output: JSON.stringify({ image_urls: [] }), charged_credits: 4, refunded_credits: 0, finished_at: new Date() })
    .where("id", "=", submitted.body.id)
    .execute();
  expect(await count()).toEqual(["SELECT"]);
  expect(await count()).toEqual([]);
  process.stdout.write("poll path: 1 SQL statement (open task), 0 (finished task), Redis: 1 limiter call\n");
});

test("a batch of k submissions: one insert statement for all of them and one addBulk", async () => {
  const users = await Promise.all([createUser(gw.deps.db, 1000), createUser(gw.deps.db, 1000), createUser(gw.deps.db, 1000)]);
  const submit = createSubmitter(gw.deps);
  const add = countCalls(gw.deps.generationQueue, "add");
  const addBulk = countCalls(gw.deps.generationQueue, "addBulk");
  statements.length = 0;
  // Started in one synchronous stretch, as requests whose reads finished in the same turn are.
  const k = 5;
  const results = await Promise.all(
    Array.from({ length: k }, (_, i) =>
      submit({
        userId: users[i % users.length]!.userId,
        requestId: `req-rt-${i}`,
        endpoint: "images",
        body: { model: "sim-image-1", prompt: `batch ${i}` },
        idempotencyKey: undefined,
      }),
    ),
  );
  expect(new Set(results.map((r) => r.task.id)).size).toBe(k);
  expect(statements.map((s) => s.trim().split(/\s+/)[0]!.toUpperCase())).toEqual(["WITH"]);
  expect(statements[0]).toMatch(/update "?users"?[\s\S]*insert into "?tasks"?[\s\S]*insert into "?ledger_entries"?[\s\S]*insert into "?webhook_deliveries"?/i);
  add.restore();
  addBulk.restore();
  expect(add.calls).toHaveLength(0);
  expect(addBulk.calls).toHaveLength(1);
  expect((addBulk.calls[0]![0] as { opts: { jobId: string } }[]).map((job) => job.opts.jobId)).toEqual(results.map((r) => r.task.id));
  process.stdout.write(`batch of ${k}: ${statements.length} SQL statement, ${addBulk.calls.length} addBulk\n`);
});
