import { readFileSync } from "node:fs";
import request from "supertest";
import { DEFAULT_CATALOG_PATH, createCatalog } from "@gen/catalog";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, snapshot, type TestGateway, type TestUser } from "./support/test-gateway.ts";

let gw: TestGateway;
let user: TestUser;

// The shipped catalog plus three image models whose pricing cannot produce a price.
function brokenCatalog() {
  const content = JSON.parse(readFileSync(DEFAULT_CATALOG_PATH, "utf8"));
  const base = content.models.find((m: { id: string }) => m.id === "sim-image-1");
  const { pricing, ...unpriced } = base;
  const partial = { ...base, id: "sim-image-partial", pricing: { ...pricing, multipliers: { ...pricing.multipliers, size: { "256x256": 1 } } } };
  const { pricing: _, ...upstreamUnpriced } = content.models.find((m: { id: string }) => m.id === "upstream-image-1");
  content.models.push({ ...unpriced, id: "sim-image-unpriced" }, partial, { ...upstreamUnpriced, id: "upstream-image-unpriced" });
  return createCatalog(content, "test");
}

beforeAll(async () => {
  gw = await createTestGateway({}, () => ({ catalog: brokenCatalog() }));
  user = await createUser(gw.deps.db, 0);
});
afterAll(() => gw.close());

test("30002 when the model has no pricing, before 30001, and nothing changes", async () => {
  const before = await snapshot(gw.deps.db, user.userId);
  const res = await request(gw.app).post("/api/v1/images/generations").set("Authorization", user.auth).send({ model: "sim-image-unpriced", prompt: "x" });
  expectError(res, 400, 30002);
  expect(await snapshot(gw.deps.db, user.userId)).toEqual(before);
});

test("30002 when the price table has no entry for the requested size", async () => {
  const res = await request(gw.app)
    .post("/api/v1/images/generations")
    .set("Authorization", user.auth)
    .send({ model: "sim-image-partial", prompt: "x", size: "512x512" });
  expectError(res, 400, 30002);
  // A priced size gets past pricing and stops at credits (the balance is 0).
  const priced = await request(gw.app)
    .post("/api/v1/images/generations")
    .set("Authorization", user.auth)
    .send({ model: "sim-image-partial", prompt: "x", size: "256x256" });
  expectError(priced, 402, 30001);
});

test("webhook_url errors come before 30002", async () => {
  const res = await request(gw.app)
    .post("/api/v1/images/generations")
    .set("Authorization", user.auth)
    .send({ model: "sim-image-unpriced", prompt: "x", webhook_url: "http://example.com" });
  expectError(res, 400, 20003);
});

test("an image_url pointing at an internal address is 20003 before 30002", async () => {
  const res = await request(gw.app)
    .post("/api/v1/images/generations")
    .set("Authorization", user.auth)
    .send({ model: "upstream-image-unpriced", prompt: "x", image_url: "http://169.254.169.254/latest/meta-data/" });
  expectError(res, 400, 20003);
  expect(res.body.error.message).toMatch(/^Invalid value for image_url: must not point at/);
});
