import request from "supertest";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, snapshot, type TestGateway, type TestUser } from "./support/test-gateway.ts";

let gw: TestGateway;
let user: TestUser;
const RATES = { POLL_RATE_PER_SEC: "1", POLL_RATE_BURST: "3", SUBMIT_RATE_PER_SEC: "1", SUBMIT_RATE_BURST: "2" };

beforeAll(async () => {
  gw = await createTestGateway(RATES);
  user = await createUser(gw.deps.db, 10_000);
});
afterAll(() => gw.close());

test("polling: burst then 429/50001 with Retry-After and RateLimit headers", async () => {
  const statuses: number[] = [];
  let last!: request.Response;
  for (let i = 0; i < 5; i++) {
    last = await request(gw.app).get("/api/v1/account").set("Authorization", user.auth);
    statuses.push(last.status);
    if (i === 0) {
      expect(last.headers["ratelimit-limit"]).toBe("3");
      expect(last.headers["ratelimit-remaining"]).toBe("2");
    }
  }
  expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
  expect(statuses.slice(3)).toEqual([429, 429]);
  expectError(last, 429, 50001);
  expect(Number(last.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  expect(last.headers["ratelimit-remaining"]).toBe("0");
  expect(Number(last.headers["ratelimit-reset"])).toBeGreaterThanOrEqual(1);
});

test("submissions have their own bucket; a limited submission changes nothing", async () => {
  const fresh = await createUser(gw.deps.db, 10_000);
  for (let i = 0; i < 3; i++) await request(gw.app).get("/api/v1/account").set("Authorization", fresh.auth);
  const body = { model: "sim-detect-1", text: "x" };
  expect((await request(gw.app).post("/api/v1/detect").set("Authorization", fresh.auth).send(body)).status).toBe(202);
  expect((await request(gw.app).post("/api/v1/detect").set("Authorization", fresh.auth).send(body)).status).toBe(202);
  const before = await snapshot(gw.deps.db, fresh.userId);
  expectError(await request(gw.app).post("/api/v1/detect").set("Authorization", fresh.auth).send(body), 429, 50001);
  expect(await snapshot(gw.deps.db, fresh.userId)).toEqual(before);
});

test("the counters are shared by every gateway instance", async () => {
  const shared = await createUser(gw.deps.db, 10_000);
  const other = await createTestGateway({ ...RATES, QUEUE_PREFIX: gw.deps.config.queuePrefix });
  const second = other.app;
  const a = await request(gw.app).get("/api/v1/account").set("Authorization", shared.auth);
  const b = await request(second).get("/api/v1/account").set("Authorization", shared.auth);
  const c = await request(gw.app).get("/api/v1/account").set("Authorization", shared.auth);
  const d = await request(second).get("/api/v1/account").set("Authorization", shared.auth);
  expect([a.status, b.status, c.status, d.status]).toEqual([200, 200, 200, 429]);
  await other.close();
});

test("the bucket refills at the configured rate", async () => {
  const slow = await createUser(gw.deps.db, 10_000);
  for (let i = 0; i < 4; i++) await request(gw.app).get("/api/v1/account").set("Authorization", slow.auth);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  expect((await request(gw.app).get("/api/v1/account").set("Authorization", slow.auth)).status).toBe(200);
});

test("takes of one event-loop turn, gathered into one script call, answer as separate calls would", async () => {
  const rate = { perSec: 1, burst: 3 };
  const subject = `gathered-${Date.now()}`;
  const limiter = gw.deps.rateLimiter;
  const decisions = await Promise.all([
    ...Array.from({ length: 5 }, () => limiter.take("poll", subject, rate)),
    limiter.take("submit", subject, rate),
    limiter.take("poll", `${subject}-other`, rate),
  ]);
  expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
    [true, 2],
    [true, 1],
    [true, 0],
    [false, 0],
    [false, 0],
    [true, 2],
    [true, 2],
  ]);
  expect(decisions[3]!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  // The other bucket's take counted once.
  expect((await limiter.take("poll", `${subject}-other`, rate)).remaining).toBe(1);
});
