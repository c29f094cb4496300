import request from "supertest";
import type { AttemptOutcome, WebhookSender } from "@gen/webhook-sender";
import { TEST_WEBHOOK_TASK_ID } from "../src/deliveries/test-webhook.ts";
import { signIn, type ConsoleOperatorSession } from "./support/console-session.ts";
import { expectError } from "./support/envelope.ts";
import { createTestConsole, type TestConsole } from "./support/test-console.ts";

// The console's "send a test webhook": the same checks as a submitted webhook_url, then one POST by
// the deployment's sender. The sender is the edge here (a recording stand-in); the real one, TLS,
// address block and all, is driven from the browser in test/e2e/console-browser.test.ts.
let gw: TestConsole;
let operator: ConsoleOperatorSession;
const sent: { url: string; body: string }[] = [];
let answer: (url: string) => Promise<AttemptOutcome> = async () => ({ ok: true, status: 204 });

const recordingSender: WebhookSender = {
  send(url, body) {
    sent.push({ url, body });
    return answer(url);
  },
  close() {},
  openRequests: () => 0,
};

beforeAll(async () => {
  gw = await createTestConsole({}, () => ({ webhookSender: recordingSender }));
  operator = await signIn(gw);
}, 60_000);
afterAll(() => gw.close());
beforeEach(() => {
  sent.length = 0;
  answer = async () => ({ ok: true, status: 204 });
});

const PATH = "/console/deliveries/test-webhook";
const post = (form: Record<string, unknown>, cookie = operator.cookie) =>
  request(gw.app)
    .post(PATH)
    .set("Accept", "text/html")
    .set("Cookie", cookie)
    .type("form")
    .send({ _csrf: operator.csrfToken, ...form });

function result(html: string): { outcome: string; text: string } | null {
  const match = /<p id="test-webhook-result"[^>]*data-outcome="([^"]*)"[^>]*>([^<]*)<\/p>/.exec(html);
  return match ? { outcome: match[1]!, text: match[2]! } : null;
}

test("one POST of a task-shaped body whose id is no task, to the URL as typed; the page shows the receiver's answer", async () => {
  const url = "https://hooks.example.com/receive/gen?token=s3cr3t&tenant=acme";
  const res = await post({ url });
  expect(res.status).toBe(200);
  expect(result(res.text)).toEqual({ outcome: "delivered", text: expect.stringContaining("Delivered (HTTP 204,") });
  expect(sent).toHaveLength(1);
  expect(sent[0]!.url).toBe(url);
  const body = JSON.parse(sent[0]!.body) as Record<string, unknown>;
  expect(Object.keys(body)).toEqual(["id", "model", "status", "created_at", "output", "usage", "error"]);
  expect(body).toMatchObject({ id: TEST_WEBHOOK_TASK_ID, status: "completed", usage: { credits: 0 }, error: null });
  expect(Math.abs((body.created_at as number) - Date.now() / 1000)).toBeLessThan(5);
  // The form offers the URL again for another try.
  expect(res.text).toContain('value="https://hooks.example.com/receive/gen?token=s3cr3t&amp;tenant=acme"');
});

test("a failed send shows its last_error and what it means", async () => {
  answer = async () => ({ ok: false, lastError: "blocked_private_address", status: null, detail: "127.0.0.1" });
  const blocked = await post({ url: "https://internal.example.com/hook" });
  expect(blocked.status).toBe(200);
  expect(result(blocked.text)).toEqual({
    outcome: "blocked_private_address",
    text: expect.stringContaining("outside WEBHOOK_ALLOWED_CIDRS; nothing was sent"),
  });
  expect(blocked.text).not.toContain("127.0.0.1");
  answer = async () => ({ ok: false, lastError: "http_503", status: 503 });
  expect(result((await post({ url: "https://hooks.example.com/x" })).text)).toEqual({
    outcome: "http_503",
    text: expect.stringContaining("Not delivered: http_503 (HTTP 503,"),
  });
});

test("whatever a webhook_url may not be is refused with its reason, and nothing is sent", async () => {
  const refused: [unknown, string][] = [
    ["http://hooks.example.com/x", "webhook_url must use https"],
    ["https://127.0.0.1/x", "webhook_url host must be a domain name, not an IP address"],
    ["https://localhost/x", "webhook_url host must be a public domain name"],
    ["https://hooks.example.com:8443/x", "webhook_url port must be 443 when given"],
    ["https://user:pw@hooks.example.com/x", "webhook_url must not contain credentials"],
    [`https://hooks.example.com/${"a".repeat(3000)}`, "webhook_url must be at most 2048 characters"],
    ["", "webhook_url must not be empty"],
    [undefined, "webhook_url must be a string"],
    [["https://a.example.com/", "https://b.example.com/"], "webhook_url must be a string"],
  ];
  for (const [url, reason] of refused) {
    const res = await post(url === undefined ? {} : { url });
    expect(res.status).toBe(400);
    expect(result(res.text)).toEqual({ outcome: "refused", text: `Not sent: ${reason}.` });
  }
  expect(sent).toEqual([]);
});

test("what the operator typed is escaped when the form is shown again", async () => {
  // Printable ASCII in the path is a valid webhook_url (sent as written); on the page it is text.
  const res = await post({ url: 'https://hooks.example.com/"><script>alert(1)</script>' });
  expect(res.status).toBe(200);
  expect(res.text).not.toContain("<script>alert(1)</script>");
  expect(res.text).toContain("&quot;&gt;&lt;script&gt;");
  expect(sent).toHaveLength(1);
});

test("at most two test webhooks at once per process; a third is refused until one finishes", async () => {
  const waiting: (() => void)[] = [];
  answer = () => new Promise((resolve) => waiting.push(() => resolve({ ok: true, status: 200 })));
  const first = post({ url: "https://a.example.com/" }).then((r) => r);
  const second = post({ url: "https://b.example.com/" }).then((r) => r);
  while (waiting.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  const third = await post({ url: "https://c.example.com/" });
  expect(third.status).toBe(429);
  expect(result(third.text)?.outcome).toBe("busy");
  for (const release of waiting) release();
  expect((await first).status).toBe(200);
  expect((await second).status).toBe(200);
  // The two were sent at once: either may reach the server first.
  expect(sent.map((s) => s.url).sort()).toEqual(["https://a.example.com/", "https://b.example.com/"]);
});

test("without the session's CSRF token, or without a session, nothing is sent", async () => {
  const forged = await request(gw.app)
    .post(PATH)
    .set("Accept", "application/json")
    .set("Cookie", operator.cookie)
    .type("form")
    .send({ url: "https://a.example.com/" });
  expectError(forged, 403, 10006);
  const anonymous = await request(gw.app).post(PATH).set("Accept", "application/json").type("form").send({ url: "https://a.example.com/" });
  expect(anonymous.status).toBe(401);
  expect(sent).toEqual([]);
});
