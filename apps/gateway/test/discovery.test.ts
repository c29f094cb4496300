import request from "supertest";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, type TestGateway, type TestUser } from "./support/test-gateway.ts";

let gw: TestGateway;
let user: TestUser;
let other: TestUser;
const submitted: string[] = [];

beforeAll(async () => {
  gw = await createTestGateway();
  user = await createUser(gw.deps.db, 10_000);
  other = await createUser(gw.deps.db, 10_000);
  for (let i = 0; i < 5; i++) {
    const body = i % 2 === 0 ? { model: "sim-image-1", prompt: `p${i}` } : { model: "sim-detect-1", text: `t${i}` };
    const path = i % 2 === 0 ? "/api/v1/images/generations" : "/api/v1/detect";
    submitted.push((await request(gw.app).post(path).set("Authorization", user.auth).send(body)).body.id);
  }
  await request(gw.app).post("/api/v1/images/generations").set("Authorization", other.auth).send({ model: "sim-image-1", prompt: "theirs" });
  await gw.deps.db.task.update({ where: { id: submitted[2]! }, data: { status: "failed", errorCode: 80003, errorMessage: "x", chargedCredits: 0 } });
});
afterAll(() => gw.close());

const get = (path: string, who: TestUser = user) => request(gw.app).get(path).set("Authorization", who.auth);
const newestFirst = () => [...submitted].reverse();

describe("GET /api/v1/models", () => {
  test("every priced catalog model with its endpoint, parameter schema, sizes, qualities and pricing", async () => {
    const res = await get("/api/v1/models");
    expect(res.status).toBe(200);
    expect(res.headers["ratelimit-limit"]).toBeDefined();
    const ids = gw.deps.catalog.models.filter((m) => m.pricing).map((m) => m.id);
    expect(res.body.data.map((m: { id: string }) => m.id)).toEqual(ids);
    const image = res.body.data.find((m: { id: string }) => m.id === "sim-image-1");
    expect(image).toMatchObject({
      endpoint: "images",
      path: "/api/v1/images/generations",
      sizes: expect.arrayContaining(["1024x1024"]),
      qualities: expect.arrayContaining(["standard"]),
      pricing: { method: "flat", units: [{ parameter: "n", per: 1 }] },
    });
    expect(image.parameters).toEqual(gw.deps.catalog.requestSchema(gw.deps.catalog.model("sim-image-1")!));
  });

  test("needs a key", async () => {
    expectError(await request(gw.app).get("/api/v1/models"), 401, 10001);
  });
});

describe("GET /api/v1/tasks", () => {
  test("the caller's own tasks, newest first, never another user's", async () => {
    const res = await get("/api/v1/tasks");
    expect(res.status).toBe(200);
    expect(res.body.data.map((t: { id: string }) => t.id)).toEqual(newestFirst());
    expect(res.body.next_cursor).toBeNull();
    expect(Object.keys(res.body.data[0])).toEqual(["id", "model", "status", "created_at", "output", "usage", "error"]);
    const theirs = await get("/api/v1/tasks", other);
    expect(theirs.body.data).toHaveLength(1);
    expect(submitted).not.toContain(theirs.body.data[0].id);
  });

  test("pages through the opaque cursor; the last page has next_cursor null", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(`/api/v1/tasks?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.map((t: { id: string }) => t.id));
      cursor = res.body.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual(newestFirst());
  });

  test("filters: status, model, endpoint, created_after / created_before", async () => {
    const ids = async (query: string) => (await get(`/api/v1/tasks?${query}`)).body.data.map((t: { id: string }) => t.id);
    expect(await ids("status=failed")).toEqual([submitted[2]]);
    expect(await ids("endpoint=detect")).toEqual([submitted[3], submitted[1]]);
    expect(await ids("model=sim-image-1&status=queued")).toEqual([submitted[4], submitted[0]]);
    expect(await ids("model=no-such-model")).toEqual([]);
    const now = Math.floor(Date.now() / 1000);
    expect(await ids(`created_after=${now + 60}`)).toEqual([]);
    expect(await ids(`created_before=${now - 3600}`)).toEqual([]);
    expect(await ids(`created_after=${new Date((now - 3600) * 1000).toISOString()}&created_before=${now + 60}`)).toEqual(newestFirst());
  });

  test("hostile and malformed queries get 20003 naming the parameter, never a 500", async () => {
    const forged = (text: string) => Buffer.from(text).toString("base64url");
    const bad = [
      "limit=0",
      "limit=101",
      "limit=100000000000000000000",
      "limit=-1",
      "limit=1.5",
      "limit=ten",
      "status=done",
      "status=failed&status=completed",
      "endpoint=images/generations",
      "model=",
      `model=${"m".repeat(201)}`,
      "created_after=yesterday",
      "created_before=99999999999999999",
      "created_after=2026-13-45T99:99:99Z",
      "cursor=not-a-cursor",
      "cursor=%00%ff",
      `cursor=${"A".repeat(5000)}`,
      `cursor=${forged("1700000000000:task_nothex")}`,
      `cursor=${forged("99999999999999999999:task_0123456789abcdef0123456789abcdef")}`,
      `cursor=${forged("1700000000000:task_0123456789abcdef0123456789abcdef' OR 1=1 --")}`,
      "user_id=someone-else",
      "include=webhook",
      "limit[]=5",
    ];
    for (const query of bad) {
      const res = await get(`/api/v1/tasks?${query}`);
      expectError(res, 400, 20003);
      expect(res.body.error.message).toContain(query.split("=")[0]!.replace("[]", ""));
    }
  });

  test("a well-formed cursor made up by the client only moves within the caller's own tasks", async () => {
    const far = Buffer.from(`${Date.now() + 86_400_000}:task_ffffffffffffffffffffffffffffffff`).toString("base64url");
    const res = await get(`/api/v1/tasks?cursor=${far}`, other);
    expect(res.status).toBe(200);
    expect(res.body.data.every((t: { id: string }) => !submitted.includes(t.id))).toBe(true);
  });

  test("rate limited like polls: 429 with Retry-After", async () => {
    const limited = await createTestGateway({ POLL_RATE_PER_SEC: "1", POLL_RATE_BURST: "2" });
    try {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await request(limited.app).get("/api/v1/tasks").set("Authorization", user.auth));
      expect(answers.map((r) => r.status)).toEqual([200, 200, 429]);
      expectError(answers[2]!, 429, 50001);
      expect(Number(answers[2]!.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    } finally {
      await limited.close();
    }
  });
});
