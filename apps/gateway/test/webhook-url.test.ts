import request from "supertest";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, snapshot, type TestGateway, type TestUser } from "./support/test-gateway.ts";
import { readDelivery } from "@gen/db";

let gw: TestGateway;
let user: TestUser;

beforeAll(async () => {
  gw = await createTestGateway();
  user = await createUser(gw.deps.db, 100_000);
});
afterAll(() => gw.close());

// Every form that a WHATWG parser turns into an IP address, every rule of docs/api.md#webhook-url-rules, and
// non-string values. None of these addresses is ever contacted: submission does not resolve.
const REFUSED: unknown[] = [
  "http://example.com/hook",
  "ftp://example.com/hook",
  "ws://example.com/hook",
  "javascript:alert(1)",
  "file:///etc/passwd",
  "example.com/hook",
  "//example.com/hook",
  "https://",
  "https:///path",
  "",
  "https://127.0.0.1/hook",
  "https://10.0.0.1/hook",
  "https://169.254.169.254/latest/meta-data",
  "https://2130706433/",
  "https://0x7f000001/",
  "https://0177.0.0.1/",
  "https://127.1/",
  "https://0x7f.1/",
  "https://0x7f.0.0.0x1/",
  "https://127.0.0.1./",
  "https://%31%32%37.0.0.1/",
  "https://１２７.０.０.１/",
  "https://0/",
  "https://[::1]/",
  "https://[::ffff:127.0.0.1]/",
  "https://[::ffff:7f00:1]/",
  "https://[fe80::1%25eth0]/",
  "https://[2001:db8::1]/",
  "https://[64:ff9b::a00:1]/",
  "https://example.com:8443/hook",
  "https://example.com:80/hook",
  "https://example.com:0/hook",
  "https://example.com:/hook",
  "https://user:pass@example.com/hook",
  "https://user@example.com/hook",
  "https://:pass@example.com/hook",
  "https://localhost/hook",
  "https://intranet/hook",
  `https://example.com/${"a".repeat(2040)}`,
  "https://exa mple.com/hook",
  "https://example.com/ho\nok",
  42,
  null,
  true,
  ["https://example.com/hook"],
  { url: "https://example.com/hook" },
];

const ACCEPTED = [
  "https://example.com/hook",
  "https://hooks.example.com:443/a/b?c=d&e=%20f",
  "https://example.com/path?token=s3cr3t#frag",
  "https://sub.domain.example.co.uk/webhooks/tasks",
  "https://xn--bcher-kva.example/hook",
  "https://example.com/a%2Fb/../c?x=1&x=2",
  "https://my-app.example.io/cb/9f2c7e",
  `https://example.com/${"a".repeat(2048 - "https://example.com/".length)}`,
  "https://a.b.example/",
];

describe("webhook_url refused: 400, 20003, no task, no charge", () => {
  test(`${REFUSED.length} refused values`, async () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(40);
    const before = await snapshot(gw.deps.db, user.userId);
    for (const webhookUrl of REFUSED) {
      const res = await request(gw.app)
        .post("/api/v1/images/generations")
        .set("Authorization", user.auth)
        .send({ model: "sim-image-1", prompt: "x", webhook_url: webhookUrl });
      try {
        expectError(res, 400, 20003);
        expect(res.body.error.message).toContain("webhook_url");
      } catch (error) {
        throw new Error(`webhook_url ${JSON.stringify(webhookUrl)}: ${(error as Error).message}`, { cause: error });
      }
    }
    expect(await snapshot(gw.deps.db, user.userId)).toEqual(before);
  });
});

describe("webhook_url accepted and stored verbatim", () => {
  test.each(ACCEPTED)("%s", async (webhookUrl) => {
    const res = await request(gw.app)
      .post("/api/v1/images/generations")
      .set("Authorization", user.auth)
      .send({ model: "sim-image-1", prompt: "x", webhook_url: webhookUrl });
    expect(res.status).toBe(202);
    const row = (await readDelivery(gw.deps.db, res.body.id))!;
    expect(row.url).toBe(webhookUrl);
  });
});
