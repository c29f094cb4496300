import request from "supertest";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, revokeKeys, snapshot, type TestGateway, type TestUser } from "./support/test-gateway.ts";

let gw: TestGateway;
let user: TestUser;
const body = { model: "sim-image-1", prompt: "a lighthouse" };

beforeAll(async () => {
  gw = await createTestGateway({ ALLOWED_ORIGINS: "https://app.example.com" });
  user = await createUser(gw.deps.db);
});
afterAll(() => gw.close());

describe("API key authentication", () => {
  test("10001 without an Authorization header", async () => {
    expectError(await request(gw.app).post("/api/v1/images/generations").send(body), 401, 10001);
    expectError(await request(gw.app).get("/api/v1/tasks/task_00000000000000000000000000000000"), 401, 10001);
    expectError(await request(gw.app).get("/api/v1/account"), 401, 10001);
  });

  test.each(["Basic dXNlcjpwYXNz", "Token sk_x", "sk_abc", "Bearer", "Bearer a b"])("10002 for %j", async (header) => {
    expectError(await request(gw.app).get("/api/v1/account").set("Authorization", header), 401, 10002);
  });

  test("10002 for the bare key without the scheme", async () => {
    expectError(await request(gw.app).get("/api/v1/account").set("Authorization", user.apiKey), 401, 10002);
  });

  test.each(["Bearer sk_short", `Bearer sk_${"A".repeat(40)}`, `Bearer ${"x".repeat(5000)}`])("10003 for an unknown or malformed key", async (header) => {
    expectError(await request(gw.app).get("/api/v1/account").set("Authorization", header), 401, 10003);
  });

  test("the scheme is case-insensitive", async () => {
    const res = await request(gw.app).get("/api/v1/account").set("Authorization", `bearer ${user.apiKey}`);
    expect(res.status).toBe(200);
  });

  test("10004 takes effect at once after revocation, and nothing is created", async () => {
    const victim = await createUser(gw.deps.db, 500);
    const ok = await request(gw.app).post("/api/v1/images/generations").set("Authorization", victim.auth).send(body);
    expect(ok.status).toBe(202);
    await revokeKeys(victim, gw);
    const before = await snapshot(gw.deps.db, victim.userId);
    expectError(await request(gw.app).post("/api/v1/images/generations").set("Authorization", victim.auth).send(body), 401, 10004);
    expectError(await request(gw.app).get(`/api/v1/tasks/${ok.body.id}`).set("Authorization", victim.auth), 401, 10004);
    expect(await snapshot(gw.deps.db, victim.userId)).toEqual(before);
  });

  test("auth errors come before body errors", async () => {
    const res = await request(gw.app).post("/api/v1/images/generations").set("Content-Type", "application/json").send("{not json");
    expectError(res, 401, 10001);
  });
});

describe("browser origins", () => {
  test("10006 for an Origin outside ALLOWED_ORIGINS, before auth", async () => {
    const before = await snapshot(gw.deps.db, user.userId);
    const res = await request(gw.app).post("/api/v1/images/generations").set("Origin", "https://evil.example").set("Authorization", user.auth).send(body);
    expectError(res, 403, 10006);
    expect(await snapshot(gw.deps.db, user.userId)).toEqual(before);
  });

  test("an allowed origin passes and gets CORS headers; preflight answers 204", async () => {
    const res = await request(gw.app).get("/api/v1/account").set("Origin", "https://app.example.com").set("Authorization", user.auth);
    expect(res.status).toBe(200);
    expect(res.headers["access-control-allow-origin"]).toBe("https://app.example.com");
    expect(res.headers["access-control-expose-headers"]).toContain("X-Request-Id");
    const preflight = await request(gw.app)
      .options("/api/v1/images/generations")
      .set("Origin", "https://app.example.com")
      .set("Access-Control-Request-Method", "POST");
    expect(preflight.status).toBe(204);
    expect(preflight.headers["access-control-allow-headers"]).toContain("Authorization");
  });

  test('the gateway\'s own origin (BASE_URL, where /docs runs "try it out") passes without being listed', async () => {
    const own = new URL(gw.deps.config.baseUrl).origin;
    const res = await request(gw.app).post("/api/v1/images/generations").set("Origin", own).set("Authorization", user.auth).send(body);
    expect(res.status).toBe(202);
    expect(res.headers["access-control-allow-origin"]).toBe(own);
    const preflight = await request(gw.app).options("/api/v1/tasks/x").set("Origin", own).set("Access-Control-Request-Method", "GET");
    expect(preflight.status).toBe(204);
    // Same host, other port or scheme: another origin.
    const other = new URL(own);
    other.port = String(Number(other.port || 80) + 1);
    expectError(await request(gw.app).get("/api/v1/account").set("Origin", other.origin).set("Authorization", user.auth), 403, 10006);
  });

  test("no Origin means server-to-server and passes", async () => {
    expect((await request(gw.app).get("/api/v1/account").set("Authorization", user.auth)).status).toBe(200);
  });
});

describe("session-auth surfaces", () => {
  test("10005 for the console without a session; browsers are redirected to sign-in", async () => {
    expectError(await request(gw.app).get("/console/deliveries").set("Accept", "application/json"), 401, 10005);
    expectError(await request(gw.app).post("/console/deliveries/redeliver").send({}), 401, 10005);
    const browser = await request(gw.app).get("/console").set("Accept", "text/html");
    expect(browser.status).toBe(302);
    expect(browser.headers.location).toBe("/console/sign-in?next=%2Fconsole");
  });
});

describe("request ids", () => {
  test("every response carries a fresh X-Request-Id", async () => {
    const a = await request(gw.app).get("/healthz");
    const b = await request(gw.app).get("/api/v1/account").set("Authorization", user.auth);
    expect(a.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{24}$/);
    expect(b.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{24}$/);
    expect(a.headers["x-request-id"]).not.toBe(b.headers["x-request-id"]);
  });
});
