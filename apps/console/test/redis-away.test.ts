import request from "supertest";
import { createRedis } from "@gen/queues";
import { RateLimiter } from "@gen/rate-limit";
import { expectError } from "./support/envelope.ts";
import { createTestConsole, type TestConsole } from "./support/test-console.ts";

// Sessions, the sign-in limits and the deployment's cookie secret are in Redis: without it the
// console answers 503 with 70001 (retry later), never a 500 or a hang.
let away: TestConsole;
beforeAll(async () => {
  away = await createTestConsole({}, (deps) => {
    const redis = createRedis("redis://127.0.0.1:1", "request");
    return { redis, rateLimiter: new RateLimiter(redis, deps.config.queuePrefix) };
  });
});
afterAll(() => away.close());

test.each([
  ["GET", "/console/sign-in"],
  ["GET", "/console"],
  ["POST", "/console/sign-in"],
  ["POST", "/console/deliveries/task_0123456789abcdef0123456789abcdef/redeliver"],
])("%s %s is 503 with 70001", async (method, path) => {
  const res = await request(away.app)[method.toLowerCase() as "get"](path).set("Cookie", "gen_console=s%3Ax.y").type("form").send({ _csrf: "x" });
  expectError(res, 503, 70001);
});

test("a browser gets the refusal as a page naming the code", async () => {
  const res = await request(away.app).get("/console/sign-in").set("Accept", "text/html");
  expect(res.status).toBe(503);
  expect(res.text).toContain('data-code="70001"');
});
