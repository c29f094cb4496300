import request from "supertest";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, snapshot, type TestGateway, type TestUser } from "./support/test-gateway.ts";
import { findTask } from "@gen/db";

// Found by the fault suite's fuzzer: JSON.parse accepts "\u0000" and unpaired surrogates
// ("\ud800"), PostgreSQL stores neither, and such a body reached the insert and failed as 60001.
let gw: TestGateway;
let user: TestUser;

beforeAll(async () => {
  gw = await createTestGateway();
  user = await createUser(gw.deps.db, 1000);
});
afterAll(() => gw.close());

const post = (path: string, raw: string) => request(gw.app).post(path).set("Authorization", user.auth).set("Content-Type", "application/json").send(raw);

test.each([
  ["NUL in a prompt", "/api/v1/images/generations", '{"model":"sim-image-1","prompt":"a\\u0000b"}', "prompt"],
  ["an unpaired high surrogate", "/api/v1/essay", '{"model":"sim-essay-1","prompt":"x\\ud800"}', "prompt"],
  ["an unpaired low surrogate", "/api/v1/detect", '{"model":"sim-detect-1","text":"\\udc00"}', "text"],
  ["surrogates in the wrong order", "/api/v1/humanize", '{"model":"sim-humanize-1","text":"\\udc00\\ud800"}', "text"],
  ["NUL in one moderation input", "/api/v1/moderations", '{"model":"sim-moderation-1","input":["fine","\\u0000"]}', "input"],
])("%s is 400/20003 naming the field, nothing created or charged", async (_name, path, raw, field) => {
  const before = await snapshot(gw.deps.db, user.userId);
  const res = await post(path, raw);
  expectError(res, 400, 20003);
  expect(res.body.error.message).toContain(field);
  expect(await snapshot(gw.deps.db, user.userId)).toEqual(before);
});

test("well-formed text outside the BMP and other control characters are accepted", async () => {
  const res = await post("/api/v1/images/generations", '{"model":"sim-image-1","prompt":"\\ud83d\\ude00 \\u0001\\u007f \\ufeff"}');
  expect(res.status).toBe(202);
  const task = (await findTask(gw.deps.db, res.body.id))!;
  expect(task.input).toMatchObject({ prompt: "😀 \u0001\u007f \ufeff" });
});
