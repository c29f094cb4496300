import request from "supertest";
import { MAX_BODY_DEPTH, MAX_BODY_ITEMS } from "../src/http/json-shape.ts";
import { HOSTILE_BODIES } from "../../../test/faults/support/hostile-bodies.ts";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, snapshot, type TestGateway, type TestUser } from "./support/test-gateway.ts";
import { findTask, readCredits } from "@gen/db";

let gw: TestGateway;
let user: TestUser;
const IMAGES = "/api/v1/images/generations";

beforeAll(async () => {
  gw = await createTestGateway();
  user = await createUser(gw.deps.db, 1000);
});
afterAll(() => gw.close());

/** Every refusal: the documented status and code, and neither balance, tasks nor ledger change. */
async function refused(path: string, send: (r: request.Test) => request.Test, status: number, code: number, auth = user) {
  const before = await snapshot(gw.deps.db, auth.userId);
  const res = await send(request(gw.app).post(path).set("Authorization", auth.auth));
  expectError(res, status, code);
  expect(await snapshot(gw.deps.db, auth.userId)).toEqual(before);
  return res;
}

const json = (body: unknown) => (r: request.Test) => r.set("Content-Type", "application/json").send(typeof body === "string" ? body : JSON.stringify(body));

describe("20001: body is not a JSON object", () => {
  test.each([
    ["malformed JSON", '{"model": '],
    ["an array", "[1,2]"],
    ["a string", '"hello"'],
    ["a number", "42"],
    ["null", "null"],
    ["empty body", ""],
  ])("%s", async (_name, raw) => {
    await refused(IMAGES, json(raw), 400, 20001);
  });

  test("a non-JSON content type", async () => {
    await refused(IMAGES, (r) => r.set("Content-Type", "text/plain").send(JSON.stringify({ model: "sim-image-1", prompt: "x" })), 400, 20001);
    await refused(IMAGES, (r) => r.type("form").send("model=sim-image-1&prompt=x"), 400, 20001);
  });
});

describe("20002: required parameter missing", () => {
  test.each([
    [IMAGES, { prompt: "x" }, "model"],
    [IMAGES, { model: "sim-image-1" }, "prompt"],
    ["/api/v1/detect", { model: "sim-detect-1" }, "text"],
    ["/api/v1/moderations", { model: "sim-moderation-1" }, "input"],
    ["/api/v1/essay", {}, "model"],
  ])("%s %j names %s", async (path, body, field) => {
    const res = await refused(path, json(body), 400, 20002);
    expect(res.body.error.message).toContain(field);
  });

  test("20002 comes before 20004", async () => {
    await refused(IMAGES, json({ model: "nope" }), 400, 20002);
  });
});

describe("20004: model not supported on this endpoint", () => {
  test.each([
    [IMAGES, { model: "nope", prompt: "x" }],
    [IMAGES, { model: "sim-video-1", prompt: "x" }],
    ["/api/v1/detect", { model: "sim-image-1", text: "x" }],
  ])("%s %j", async (path, body) => {
    await refused(path, json(body), 400, 20004);
  });

  // A model of the wrong type is an invalid value; 20004 names a string it does not know.
  test.each([
    [12, "number 12"],
    [null, "null"],
    [false, "boolean false"],
    [["sim-image-1"], "an array"],
    [{ id: "sim-image-1" }, "an object"],
  ])("a model that is not a string (%j) is 20003", async (model, kind) => {
    const res = await refused(IMAGES, json({ model, prompt: "x", size: "7x7" }), 400, 20003);
    expect(res.body.error.message).toBe(`Invalid value for model: must be a string naming a model supported on ${IMAGES}; got ${kind}`);
  });
});

describe("values", () => {
  test.each([
    [{ model: "sim-image-1", prompt: 5 }, "prompt"],
    [{ model: "sim-image-1", prompt: "x", n: 9 }, "n"],
    [{ model: "sim-image-1", prompt: "x", n: "2" }, "n"],
    [{ model: "sim-image-1", prompt: "x", colour: "red" }, "colour"],
    [{ model: "sim-image-1", prompt: "x", content_filter: "no" }, "content_filter"],
  ])("20003 for %j naming %s", async (body, field) => {
    const res = await refused(IMAGES, json(body), 400, 20003);
    expect(res.body.error.message).toContain(field);
  });

  test("content_filter is refused by a model without it", async () => {
    await refused("/api/v1/videos/generations", json({ model: "sim-video-1", prompt: "x", content_filter: false }), 400, 20003);
  });

  test("content_filter false is accepted by a model that has it", async () => {
    const res = await request(gw.app).post(IMAGES).set("Authorization", user.auth).send({ model: "sim-image-1", prompt: "x", content_filter: false });
    expect(res.status).toBe(202);
  });

  test("20005 size, 20006 quality, 20007 prompt length", async () => {
    await refused(IMAGES, json({ model: "sim-image-1", prompt: "x", size: "7x7" }), 400, 20005);
    await refused(IMAGES, json({ model: "sim-image-1", prompt: "x", quality: "ultra" }), 400, 20006);
    await refused(IMAGES, json({ model: "sim-image-1", prompt: "x".repeat(100_000) }), 400, 20007);
  });

  // Not unknown fields (20003) but the codes of size and quality.
  test("20005 / 20006 for a size or quality given to a model that has none", async () => {
    let res = await refused("/api/v1/audio/generations", json({ model: "sim-audio-1", prompt: "x", size: "1024x1024" }), 400, 20005);
    expect(res.body.error.message).toBe('Size "1024x1024" is not supported by model sim-audio-1; it takes no size');
    res = await refused(IMAGES, json({ model: "upstream-image-1", prompt: "x", quality: "hd" }), 400, 20006);
    expect(res.body.error.message).toBe('Quality "hd" is not supported by model upstream-image-1; it takes no quality');
    res = await refused("/api/v1/detect", json({ model: "sim-detect-1", text: "x", quality: 1, size: ["a"] }), 400, 20005);
    expect(res.body.error.message).toBe("Size an array is not supported by model sim-detect-1; it takes no size");
    // Still after a genuine unknown field and a bad value, as the order says.
    await refused("/api/v1/audio/generations", json({ model: "sim-audio-1", prompt: "x", size: "1", colour: "red" }), 400, 20003);
    await refused("/api/v1/audio/generations", json({ model: "sim-audio-1", prompt: "x", size: "1", duration_seconds: 0 }), 400, 20003);
  });

  test("the order is 20003, 20005, 20006, 20007, then webhook_url", async () => {
    const long = "x".repeat(100_000);
    await refused(IMAGES, json({ model: "sim-image-1", prompt: long, size: "7x7", quality: "ultra", n: 99, webhook_url: "http://x" }), 400, 20003);
    await refused(IMAGES, json({ model: "sim-image-1", prompt: long, size: "7x7", quality: "ultra", webhook_url: "http://x" }), 400, 20005);
    await refused(IMAGES, json({ model: "sim-image-1", prompt: long, quality: "ultra", webhook_url: "http://x" }), 400, 20006);
    await refused(IMAGES, json({ model: "sim-image-1", prompt: long, webhook_url: "http://x" }), 400, 20007);
    const res = await refused(IMAGES, json({ model: "sim-image-1", prompt: "x", webhook_url: "http://x" }), 400, 20003);
    expect(res.body.error.message).toContain("webhook_url");
  });

  test("20008 for a body over 1 MiB", async () => {
    const big = JSON.stringify({ model: "sim-image-1", prompt: "x".repeat(1024 * 1024) });
    await refused(IMAGES, json(big), 413, 20008);
  });
});

// Any body under 1 MiB is answered in a few milliseconds whatever its shape
// (bench/validation-cost.ts measures it); here, that each answer is the documented one.
describe("hostile body shapes", () => {
  test.each(HOSTILE_BODIES.filter((h) => h.expect !== "202").map((h) => [h.name, h] as const))("%s", async (_name, hostile) => {
    const [status, code] = hostile.expect.split("/").map(Number);
    await refused(hostile.path, json(hostile.body), status!, code!);
  });

  test.each(HOSTILE_BODIES.filter((h) => h.expect === "202").map((h) => [h.name, h] as const))("%s is accepted", async (_name, hostile) => {
    const res = await request(gw.app).post(hostile.path).set("Authorization", user.auth).set("Content-Type", "application/json").send(hostile.body);
    expect(res.status).toBe(202);
  });

  const items = (count: number) => `{"model":"sim-image-1","prompt":"x","x":[${Array.from({ length: count - 3 }, () => "0").join(",")}]}`;
  const depth = (levels: number) => `{"model":"sim-image-1","prompt":"x","x":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`;

  test(`${MAX_BODY_ITEMS} array items and object members are read; one more is refused unparsed`, async () => {
    let res = await refused(IMAGES, json(items(MAX_BODY_ITEMS)), 400, 20003);
    expect(res.body.error.message).toBe("Unknown parameter: x");
    res = await refused(IMAGES, json(items(MAX_BODY_ITEMS + 1)), 400, 20003);
    expect(res.body.error.message).toBe(`Invalid request body: more than ${MAX_BODY_ITEMS} array items and object members in all`);
  });

  test(`${MAX_BODY_DEPTH} levels of nesting are read; one more is refused unparsed`, async () => {
    let res = await refused(IMAGES, json(depth(MAX_BODY_DEPTH)), 400, 20003);
    expect(res.body.error.message).toBe("Unknown parameter: x");
    res = await refused(IMAGES, json(depth(MAX_BODY_DEPTH + 1)), 400, 20003);
    expect(res.body.error.message).toBe(`Invalid request body: arrays and objects nested more than ${MAX_BODY_DEPTH} levels deep`);
  });

  test("over a limit, a body that is not an object is still 20001, and an unfinished one 20003", async () => {
    await refused(IMAGES, json(`  ${"[".repeat(100_000)}${"]".repeat(100_000)}`), 400, 20001);
    await refused(IMAGES, json(`[${"1,".repeat(5000)}1]`), 400, 20001);
    await refused(IMAGES, json(`{"model":"sim-image-1","prompt":"x","x":${"[".repeat(100)}`), 400, 20003);
  });

  test("brackets and commas inside strings do not count", async () => {
    const prompt = `[{,"\\"${"[{,".repeat(1000)}`;
    const res = await request(gw.app).post(IMAGES).set("Authorization", user.auth).send({ model: "sim-image-1", prompt, n: 1, size: "256x256" });
    expect(res.status).toBe(202);
  });
});

describe("credits", () => {
  test("30001 when the balance is short; message names the balance", async () => {
    const poor = await createUser(gw.deps.db, 0);
    const res = await refused(IMAGES, json({ model: "sim-image-1", prompt: "x" }), 402, 30001, poor);
    expect(res.body.error.message).toMatch(/balance is 0/);
  });

  test("webhook_url errors come before 30001", async () => {
    const poor = await createUser(gw.deps.db, 0);
    await refused(IMAGES, json({ model: "sim-image-1", prompt: "x", webhook_url: "ftp://x.example.com" }), 400, 20003, poor);
  });

  test("two concurrent submissions never overdraw", async () => {
    const tight = await createUser(gw.deps.db, 0);
    const one = await request(gw.app).post(IMAGES).set("Authorization", user.auth).send({ model: "sim-image-1", prompt: "price probe" });
    const price = (await findTask(gw.deps.db, one.body.id))!.reservedCredits;
    await gw.deps.db.$kysely.updateTable("users").set({ credits: price }).where("id", "=", tight.userId).execute();
    const results = await Promise.all(
      [0, 1, 2].map(() => request(gw.app).post(IMAGES).set("Authorization", tight.auth).send({ model: "sim-image-1", prompt: "price probe" })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([202, 402, 402]);
    expect(await readCredits(gw.deps.db, tight.userId)).toBe(0);
  });
});
