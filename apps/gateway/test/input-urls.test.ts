import { createUrlTargetGuard, type NameResolver } from "@gen/webhook-url";
import request from "supertest";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, snapshot, type TestGateway, type TestUser } from "./support/test-gateway.ts";
import { findTask } from "@gen/db";

// image_url is handed to the upstream, which fetches it: a request must not make it fetch an
// internal address. Nothing here connects anywhere: literal addresses are refused from the string,
// and names go to this resolver, which maps test names to loopback and fails every other name.
const NAMES: Record<string, string[]> = {
  "internal.test": ["127.0.0.9"],
  "media.test": ["127.0.0.5"],
  "split.test": ["127.0.0.5", "127.0.0.9"],
};
const resolved: string[] = [];
// c-ares's answers: a family without records is ENODATA, a name without any is ENOTFOUND.
const query = (family: 4 | 6) => async (hostname: string) => {
  if (family === 4) resolved.push(hostname);
  await new Promise((resolve) => setImmediate(resolve));
  const addresses = NAMES[hostname];
  if (!addresses) throw Object.assign(new Error(`query ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
  if (family === 6) throw Object.assign(new Error(`query ENODATA ${hostname}`), { code: "ENODATA" });
  return addresses;
};
const resolver: NameResolver = { resolve4: query(4), resolve6: query(6) };

let gw: TestGateway;
let user: TestUser;

beforeAll(async () => {
  // 127.0.0.5 stands for the operator's on-premises media host.
  gw = await createTestGateway({ INPUT_URL_ALLOWED_CIDRS: "127.0.0.5" }, (deps) => ({
    urlGuard: createUrlTargetGuard({ allowedCidrs: deps.config.inputUrlAllowedCidrs, resolver }),
  }));
  user = await createUser(gw.deps.db, 100_000);
});
afterAll(() => gw.close());
beforeEach(() => {
  resolved.length = 0;
});

const submit = (path: string, body: Record<string, unknown>) => request(gw.app).post(path).set("Authorization", user.auth).send(body);
const IMAGES = "/api/v1/images/generations";

const REFUSED: [url: string, why: RegExp][] = [
  ["http://169.254.169.254/latest/meta-data/iam/security-credentials/", /169\.254\.169\.254: cloudMetadata/],
  ["http://[fd00:ec2::254]/latest/meta-data/", /cloudMetadata/],
  ["http://[::ffff:a9fe:a9fe]/", /cloudMetadata/],
  ["http://127.0.0.1:8090/files/x.png", /127\.0\.0\.1: loopback/],
  ["http://0x7f000001/", /127\.0\.0\.1: loopback/],
  ["http://2130706433/", /127\.0\.0\.1: loopback/],
  ["http://[::1]/a.png", /::1: loopback/],
  ["http://10.0.0.8/a.png", /10\.0\.0\.8: private/],
  ["http://192.168.0.10/a.png", /private/],
  ["http://[fe80::1]/a.png", /linkLocal/],
  ["http://localhost:9000/a.png", /localhost: loopback/],
  ["https://internal.test/a.png", /internal\.test resolves to 127\.0\.0\.9: loopback/],
  ["https://split.test/a.png", /split\.test resolves to 127\.0\.0\.9: loopback/],
];

describe("image_url pointing at an internal address: 400, 20003 naming image_url, no task, no charge", () => {
  test.each(REFUSED)("%s", async (url, why) => {
    const before = await snapshot(gw.deps.db, user.userId);
    for (const [path, model] of [
      [IMAGES, "upstream-image-1"],
      [IMAGES, "sim-image-1"],
      ["/api/v1/videos/generations", "sim-video-1"],
    ] as const) {
      const res = await submit(path, { model, prompt: "a boat", image_url: url });
      expectError(res, 400, 20003);
      expect(res.body.error.message).toMatch(/^Invalid value for image_url: must not point at a private, loopback, link-local or metadata address/);
      expect(res.body.error.message).toMatch(why);
    }
    expect(await snapshot(gw.deps.db, user.userId)).toEqual(before);
  });

  test("the same holds with an Idempotency-Key, and nothing is stored under it", async () => {
    const headers = { Authorization: user.auth, "Idempotency-Key": "input-url-1" };
    const refused = await request(gw.app).post(IMAGES).set(headers).send({ model: "upstream-image-1", prompt: "x", image_url: "http://169.254.169.254/" });
    expectError(refused, 400, 20003);
    const accepted = await request(gw.app).post(IMAGES).set(headers).send({ model: "upstream-image-1", prompt: "x", image_url: "https://media.test/a.png" });
    expect(accepted.status).toBe(202);
  });
});

describe("image_url accepted", () => {
  test.each([
    ["a name resolving to an allowlisted address", "https://media.test/ref.png"],
    ["an allowlisted literal address", "http://127.0.0.5:9000/ref.png"],
    ["a name that does not resolve (the upstream fails it)", "https://no-such-host.test/ref.png"],
  ])("%s: %s", async (_name, url) => {
    const res = await submit(IMAGES, { model: "upstream-image-1", prompt: "a boat", image_url: url });
    expect(res.status).toBe(202);
    const task = (await findTask(gw.deps.db, res.body.id))!;
    expect((task.input as Record<string, unknown>).image_url).toBe(url);
  });

  test("a submission without a URL parameter resolves nothing", async () => {
    expect((await submit(IMAGES, { model: "upstream-image-1", prompt: "https://internal.test/ in a prompt is only text" })).status).toBe(202);
    expect(resolved).toEqual([]);
  });
});

test("a scheme other than http(s) is still refused by the schema first", async () => {
  const res = await submit(IMAGES, { model: "upstream-image-1", prompt: "x", image_url: "file:///etc/passwd" });
  expectError(res, 400, 20003);
  expect(res.body.error.message).toBe("Invalid value for image_url: must be an http(s) URL of at most 2048 characters");
});

test("a malformed INPUT_URL_ALLOWED_CIDRS stops the gateway at start-up", async () => {
  await expect(createTestGateway({ INPUT_URL_ALLOWED_CIDRS: "10.1/16" })).rejects.toThrow(/invalid allowed CIDR "10.1\/16"/);
});
