import request from "supertest";
import { createTestGateway, createUser, type TestGateway, type TestUser } from "./support/test-gateway.ts";

// Polls and submissions are the app's first routes (hot-routes.ts); every target Express matches to
// the same route (another case, a trailing slash, percent-encoding) must answer as the plain one:
// status, body shape, and the same headers in the same order.
let gw: TestGateway;
let user: TestUser;
let taskId: string;
const origin = "http://localhost:3000";

beforeAll(async () => {
  gw = await createTestGateway({ ALLOWED_ORIGINS: origin });
  user = await createUser(gw.deps.db);
  const res = await request(gw.app).post("/api/v1/images/generations").set("Authorization", user.auth).send({ model: "sim-image-1", prompt: "a cat" });
  expect(res.status).toBe(202);
  taskId = res.body.id;
});
afterAll(() => gw.close());

const VARYING = new Set(["x-request-id", "date", "ratelimit-remaining", "ratelimit-reset", "location", "content-length", "etag"]);

/** Header names in wire order, with the values that do not vary between two requests. */
function headerShape(res: request.Response): string[] {
  const raw = (res as unknown as { res: { rawHeaders: string[] } }).res.rawHeaders;
  const shape: string[] = [];
  for (let i = 0; i < raw.length; i += 2) shape.push(VARYING.has(raw[i]!.toLowerCase()) ? raw[i]! : `${raw[i]}: ${raw[i + 1]}`);
  return shape;
}

test.each([
  ["a trailing slash", (id: string) => `/api/v1/tasks/${id}/`],
  ["upper case", (id: string) => `/API/v1/tasks/${id}`],
  ["a percent-encoded id", (id: string) => `/api/v1/tasks/${encodeURIComponent(id).replace("_", "%5F")}`],
])("a poll by %s (the router) answers as the fast path does", async (_what, target) => {
  for (const query of ["", "?include=billing,webhook"]) {
    const fast = await request(gw.app).get(`/api/v1/tasks/${taskId}${query}`).set("Authorization", user.auth).set("Origin", origin);
    const routed = await request(gw.app)
      .get(`${target(taskId)}${query}`)
      .set("Authorization", user.auth)
      .set("Origin", origin);
    expect(fast.status).toBe(200);
    expect(routed.status).toBe(200);
    expect(routed.text).toBe(fast.text);
    expect(headerShape(routed)).toEqual(headerShape(fast));
  }
});

test("errors on the fast path are the router's: 401, 404, 20003, 10006", async () => {
  for (const [target, auth, from] of [
    [`/api/v1/tasks/${taskId}`, "", undefined],
    ["/api/v1/tasks/task_nope", user.auth, undefined],
    [`/api/v1/tasks/${taskId}?include=secrets`, user.auth, undefined],
    [`/api/v1/tasks/${taskId}`, user.auth, "https://evil.example"],
  ] as const) {
    const fast = request(gw.app).get(target).set("Authorization", auth);
    const routed = request(gw.app).get(target.replace("/api/", "/API/")).set("Authorization", auth);
    if (from !== undefined) {
      fast.set("Origin", from);
      routed.set("Origin", from);
    }
    const [a, b] = [await fast, await routed];
    expect(a.status).toBeGreaterThanOrEqual(400);
    expect(b.status).toBe(a.status);
    expect(b.body.error.code).toBe(a.body.error.code);
    expect(b.body.error.message).toBe(a.body.error.message);
    expect(headerShape(b)).toEqual(headerShape(a));
  }
});

test("a submission by a trailing slash (the router) answers as the fast path does", async () => {
  const body = { model: "sim-image-1", prompt: "a dog" };
  const fast = await request(gw.app).post("/api/v1/images/generations").set("Authorization", user.auth).send(body);
  const routed = await request(gw.app).post("/api/v1/images/generations/").set("Authorization", user.auth).send(body);
  expect(fast.status).toBe(202);
  expect(routed.status).toBe(202);
  expect(Object.keys(routed.body)).toEqual(Object.keys(fast.body));
  expect(headerShape(routed)).toEqual(headerShape(fast));
  const bad = await request(gw.app).post("/api/v1/images/generations").set("Authorization", user.auth).set("Content-Type", "application/json").send("[1]");
  const badRouted = await request(gw.app)
    .post("/api/v1/images/generations/")
    .set("Authorization", user.auth)
    .set("Content-Type", "application/json")
    .send("[1]");
  expect(badRouted.status).toBe(bad.status);
  expect(badRouted.body.error.code).toBe(bad.body.error.code);
  expect(headerShape(badRouted)).toEqual(headerShape(bad));
});

test("a conditional poll keeps Express's answer (If-None-Match: * is fresh: 304)", async () => {
  const fast = await request(gw.app).get(`/api/v1/tasks/${taskId}`).set("Authorization", user.auth).set("If-None-Match", "*");
  const routed = await request(gw.app).get(`/api/v1/tasks/${taskId}/`).set("Authorization", user.auth).set("If-None-Match", "*");
  expect(routed.status).toBe(fast.status);
});

test("a poll's directly written 200 has the headers of Express's send (HEAD still uses it)", async () => {
  const direct = await request(gw.app).get(`/api/v1/tasks/${taskId}`).set("Authorization", user.auth).set("Origin", origin);
  const sent = await request(gw.app).head(`/api/v1/tasks/${taskId}`).set("Authorization", user.auth).set("Origin", origin);
  expect(sent.status).toBe(200);
  expect(headerShape(direct)).toEqual(headerShape(sent));
  expect(Number(direct.headers["content-length"])).toBe(Buffer.byteLength(direct.text));
});
