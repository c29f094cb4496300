import request from "supertest";
import { signIn } from "./support/console-session.ts";
import { createTestConsole, type TestConsole } from "./support/test-console.ts";
import { deletePrefixAt } from "../../../test/support/redis-keys.ts";
import { testPrefix } from "../../../test/support/run-scope.ts";

// A deployment's gateways and its `pnpm start:console` share sessions through Redis: the cookie's
// signing secret is CONSOLE_SESSION_SECRET or, unset, one kept in Redis under the QUEUE_PREFIX.
const prefix = testPrefix("test");
const started: TestConsole[] = [];
const start = async (env: Record<string, string> = {}) => {
  const app = await createTestConsole({ QUEUE_PREFIX: prefix, ...env });
  started.push(app);
  return app;
};
afterAll(async () => {
  for (const app of started) await app.close();
  await deletePrefixAt("redis://127.0.0.1:6379", prefix);
});

const home = (app: TestConsole, cookie: string) => request(app.app).get("/console").set("Cookie", cookie);

test("without CONSOLE_SESSION_SECRET: a session opened on one process is valid on another of the deployment", async () => {
  const [a, b] = [await start(), await start()];
  const session = await signIn(a);
  expect((await home(b, session.cookie)).status).toBe(200);
  expect(await a.deps.redis.get(`${prefix}:console:session-secret`)).toMatch(/^[\w-]{43}$/);
});

test("a cookie signed with another secret is no session, even when Redis holds its id", async () => {
  const ours = await start({ CONSOLE_SESSION_SECRET: "x".repeat(40) });
  const theirs = await start({ CONSOLE_SESSION_SECRET: "y".repeat(40) });
  const session = await signIn(ours);
  expect((await home(ours, session.cookie)).status).toBe(200);
  const refused = await home(theirs, session.cookie);
  expect(refused.status).toBe(401);
  expect(refused.body.error.code).toBe(10005);
});

test("the console's own listener answers unknown paths with 40002 and sends / to /console", async () => {
  const app = await start();
  expect((await request(app.app).get("/")).headers.location).toBe("/console");
  const api = await request(app.app).get("/api/v1/account");
  expect(api.status).toBe(404);
  expect(api.body.error.code).toBe(40002);
});
