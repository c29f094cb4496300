import pg from "pg";
import request from "supertest";
import { createDatabase } from "@gen/db";
import { hashApiKey } from "@gen/ids";
import { createScratchDatabase, type ScratchDatabase } from "../../../test/support/scratch-database.ts";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, type TestGateway } from "./support/test-gateway.ts";
import { until } from "../../../test/support/until.ts";

// A gateway process whose revocation listener is down answers no key from memory: its LISTEN
// backend terminated (pg_terminate_backend) and kept from reconnecting (the database refuses new
// connections, ALLOW_CONNECTIONS false, on a database of this file's own), it reads every key from
// PostgreSQL, sees a revocation made meanwhile, and starts from an empty cache once it is back.
let scratch: ScratchDatabase;
let admin: pg.Client;
let gw: TestGateway;
let name: string;
const statements: string[] = [];

/** Whether a request made a key read: the SQL statements `gw` sent while it ran. */
async function readsKey(auth: string, expected: number): Promise<boolean> {
  statements.length = 0;
  const res = await request(gw.app).get("/api/v1/account").set("Authorization", auth);
  expect(res.status).toBe(expected);
  return statements.some((sql) => /api_keys/i.test(sql));
}

beforeAll(async () => {
  scratch = await createScratchDatabase();
  name = new URL(scratch.url).pathname.slice(1);
  const adminUrl = new URL(scratch.url);
  adminUrl.pathname = "/postgres";
  admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  gw = await createTestGateway({ DATABASE_URL: scratch.url }, () => ({
    db: createDatabase(scratch.url, { onQuery: (sql) => statements.push(sql) }),
  }));
}, 60_000);

afterAll(async () => {
  await admin?.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`).catch(() => {});
  await gw?.close();
  await admin?.end();
  await scratch?.drop();
});

test("listener connection killed: every request reads PostgreSQL until it is back, a revocation in the gap is seen, and the cache restarts empty", async () => {
  expect(gw.deps.keyRevocations.listening).toBe(true);
  const user = await createUser(gw.deps.db);
  const bystander = await createUser(gw.deps.db);
  expect(await readsKey(user.auth, 200)).toBe(true);
  expect(await readsKey(bystander.auth, 200)).toBe(true);
  expect(await readsKey(user.auth, 200)).toBe(false);

  // The pool keeps its open connections; new ones (the listener's reconnects) are refused.
  await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
  const { rows } = await admin.query<{ terminated: boolean }>(
    "SELECT pg_terminate_backend(pid, 10000) AS terminated FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'gateway key revocations%'",
    [name],
  );
  expect(rows).toEqual([{ terminated: true }]);
  await until(() => !gw.deps.keyRevocations.listening, "the process noticing its listener is gone");

  // A key that was cached is read again, and a revocation committed now (no listener to tell) shows.
  expect(await readsKey(bystander.auth, 200)).toBe(true);
  expect(await readsKey(bystander.auth, 200)).toBe(true);
  await gw.deps.db.$sql.query("UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1", [hashApiKey(user.apiKey)]);
  expectError(await request(gw.app).get("/api/v1/account").set("Authorization", user.auth), 401, 10004);

  await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
  await until(() => gw.deps.keyRevocations.listening, "the listener connected again");
  // Empty after the reconnect: the first request reads, the next is answered from memory.
  expect(await readsKey(bystander.auth, 200)).toBe(true);
  expect(await readsKey(bystander.auth, 200)).toBe(false);
  expectError(await request(gw.app).get("/api/v1/account").set("Authorization", user.auth), 401, 10004);
}, 60_000);
