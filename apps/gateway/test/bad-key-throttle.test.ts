import request from "supertest";
import { createDatabase } from "@gen/db";
import { newApiKey } from "@gen/ids";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, testDatabase } from "./support/test-gateway.ts";

// A flood of bogus keys from one address is refused before PostgreSQL; valid keys
// from the same address (customers behind one NAT) are not counted and not refused.
const db = testDatabase();
const LIMITS = { BAD_KEY_RATE_PER_MIN: "1", BAD_KEY_BURST: "3" };
afterAll(() => db.$disconnect());

async function gatewayCountingKeyLookups(env: Record<string, string>) {
  const lookups: string[] = [];
  const gw = await createTestGateway({ ...LIMITS, ...env }, () => ({
    db: createDatabase(process.env.DATABASE_URL!, { onQuery: (sql) => sql.includes("api_keys") && lookups.push(sql) }),
  }));
  return { gw, lookups };
}

test("TRUST_PROXY off: X-Forwarded-For is ignored; after the limit bogus keys get 429 without a database query, valid keys still pass", async () => {
  const { gw, lookups } = await gatewayCountingKeyLookups({});
  const known = await createUser(db);
  const other = await createUser(db);
  try {
    // Valid keys do not count, however many.
    for (let i = 0; i < 10; i++) expect((await request(gw.app).get("/api/v1/account").set("Authorization", known.auth)).status).toBe(200);
    const bogus = (i: number) => request(gw.app).get("/api/v1/account").set("Authorization", `Bearer ${newApiKey()}`).set("X-Forwarded-For", `198.51.100.${i}`);
    for (let i = 0; i < 3; i++) expectError(await bogus(i), 401, 10003);
    const over = await bogus(3);
    expectError(over, 429, 50001);
    expect(Number(over.headers["retry-after"])).toBeGreaterThanOrEqual(1);

    const before = lookups.length;
    for (let i = 4; i < 24; i++) expectError(await bogus(i), 429, 50001);
    expect(lookups.length).toBe(before);

    // A key this gateway has seen succeed passes while the address is blocked, from its key cache
    // (revocation still applies at once: the process's revocation listener drops the key from the
    // cache, poll-caches.test.ts).
    expect((await request(gw.app).get("/api/v1/account").set("Authorization", known.auth)).status).toBe(200);
    expect(lookups.length).toBe(before);
    // A good key not seen by this process recently shares the address's back-off (documented).
    expectError(await request(gw.app).get("/api/v1/account").set("Authorization", other.auth), 429, 50001);
  } finally {
    await gw.close();
  }
});

test("TRUST_PROXY=1: the address behind the proxy is the one counted", async () => {
  const { gw } = await gatewayCountingKeyLookups({ TRUST_PROXY: "1" });
  try {
    const bogus = (from: string) => request(gw.app).get("/api/v1/account").set("Authorization", `Bearer ${newApiKey()}`).set("X-Forwarded-For", from);
    for (let i = 0; i < 3; i++) expectError(await bogus("198.51.100.7"), 401, 10003);
    expectError(await bogus("198.51.100.7"), 429, 50001);
    // Another client behind the same proxy has its own bucket; a spoofed hop before it is ignored.
    expectError(await bogus("198.51.100.8"), 401, 10003);
    expectError(await bogus("198.51.100.7, 198.51.100.9"), 401, 10003);
    expectError(await bogus("198.51.100.9, 198.51.100.7"), 429, 50001);
  } finally {
    await gw.close();
  }
});

test("IPv6 counts by /64: every address of one prefix shares a bucket; an IPv4-mapped address is its IPv4", async () => {
  const { gw } = await gatewayCountingKeyLookups({ TRUST_PROXY: "1" });
  try {
    const bogus = (from: string) => request(gw.app).get("/api/v1/account").set("Authorization", `Bearer ${newApiKey()}`).set("X-Forwarded-For", from);
    // Three addresses of one /64 spend its bucket; a fourth one of the same /64 is refused.
    for (const address of ["2001:db8:5:6::1", "2001:db8:5:6:a:b:c:d", "2001:db8:5:6:ffff:ffff:ffff:fffe"]) expectError(await bogus(address), 401, 10003);
    expectError(await bogus("2001:db8:5:6:1234::9"), 429, 50001);
    // The neighbouring /64 is another subscriber.
    expectError(await bogus("2001:db8:5:7::1"), 401, 10003);
    // An IPv4 client seen through a dual-stack socket is the same client as its IPv4 address.
    for (let i = 0; i < 3; i++) expectError(await bogus("198.51.100.77"), 401, 10003);
    expectError(await bogus("::ffff:198.51.100.77"), 429, 50001);
  } finally {
    await gw.close();
  }
});

test("Redis away: failed lookups are counted by the process itself", async () => {
  const { createRedis } = await import("@gen/queues");
  const { RateLimiter } = await import("@gen/rate-limit");
  const { BadKeyThrottle } = await import("../src/services/bad-key-throttle.ts");
  const gw = await createTestGateway(LIMITS, (deps) => {
    const redis = createRedis("redis://127.0.0.1:1", "request");
    const rateLimiter = new RateLimiter(redis, deps.config.queuePrefix);
    return { redis, rateLimiter, badKeyThrottle: new BadKeyThrottle(rateLimiter, deps.config.badKeyRate) };
  });
  try {
    const bogus = () => request(gw.app).get("/api/v1/account").set("Authorization", `Bearer ${newApiKey()}`);
    for (let i = 0; i < 3; i++) expectError(await bogus(), 401, 10003);
    expectError(await bogus(), 429, 50001);
  } finally {
    await gw.close();
  }
});
