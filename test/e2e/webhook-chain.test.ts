import { createWebhookSender } from "@gen/webhook-sender";
import { resolverFor } from "../../packages/webhook-sender/test/helpers/fake-resolver.ts";
import { startReceiver, type Receiver } from "../../packages/webhook-sender/test/helpers/receiver.ts";
import { createTestCa, issueServerCert } from "../../packages/webhook-sender/test/helpers/test-pki.ts";
import { ledgerHolds, startStack, type Stack } from "./stack.ts";
import { findRows } from "../support/db-rows.ts";

// The whole chain: submission with webhook_url → generation worker → delivery worker → an HTTPS
// receiver. A submitted webhook_url may not name a port, so the receiver needs 127.0.0.1:443:
// binding it needs root (CI runs as root). The same path with an ephemeral port is covered by
// apps/worker/test/delivery with URLs written straight into the database.
const HOST = "hooks.test.example";
const canBind443 = process.getuid?.() === 0;
const maybe = canBind443 ? describe : describe.skip;
if (!canBind443) console.warn("webhook-chain: skipped, binding 127.0.0.1:443 needs root");

let stack: Stack;
let receiver: Receiver;
let user: { userId: string; auth: string };

maybe("webhook delivered end to end", () => {
  beforeAll(async () => {
    const ca = await createTestCa("e2e test CA");
    receiver = await startReceiver({ tls: await issueServerCert([HOST], { ca }), host: "127.0.0.1", port: 443 });
    stack = await startStack({ WEBHOOK_ALLOWED_CIDRS: "127.0.0.1/32" });
    stack.startWorker();
    stack.startDeliveryWorker(createWebhookSender({ timeoutMs: 2000, allowedCidrs: ["127.0.0.1/32"], lookup: resolverFor(HOST, ["127.0.0.1"]), ca: ca.cert }));
    user = await stack.user();
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  test("the POST carries exactly the GET body (completed) and the attempt id (failed)", async () => {
    const url = `https://${HOST}/hooks/tasks?secret=s3cr3t&x=%20y`;
    const ok = (await stack.submit(user.auth, "/api/v1/images/generations", { model: "sim-image-1", prompt: "a kite", size: "256x256", webhook_url: url })).body
      .id;
    const bad = (await stack.submit(user.auth, "/api/v1/detect", { model: "sim-detect-1", text: "x [[sim:fail=80003]]", webhook_url: url })).body.id;
    for (const id of [ok, bad]) await stack.waitTerminal(user.auth, id);
    const deadline = Date.now() + 15_000;
    while (receiver.requests.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(receiver.requests).toHaveLength(2);

    for (const request of receiver.requests) {
      expect(request.method).toBe("POST");
      expect(request.url).toBe("/hooks/tasks?secret=s3cr3t&x=%20y");
      const headers = Object.fromEntries(request.rawHeaders.flatMap((v, i, a) => (i % 2 === 0 ? [[v.toLowerCase(), a[i + 1]]] : [])));
      expect(headers["content-type"]).toBe("application/json");
      expect(headers["user-agent"]).toBe("service-Webhook/1");
      expect(Object.keys(headers).sort()).toEqual(["connection", "content-length", "content-type", "host", "user-agent"]);
    }
    const bodyOf = (id: string) => receiver.requests.map((r) => r.body.toString("utf8")).find((b) => b.includes(id))!;

    const polled = await fetch(`${stack.baseUrl}/api/v1/tasks/${ok}`, { headers: { Authorization: user.auth } });
    expect(bodyOf(ok)).toBe(await polled.text());

    const [attempt] = await findRows(stack.gateway.db, "webhook_attempts", { taskId: bad });
    if (attempt === undefined) throw new Error(`no attempt of ${bad}`);
    const polledFailed = JSON.parse(await (await fetch(`${stack.baseUrl}/api/v1/tasks/${bad}`, { headers: { Authorization: user.auth } })).text());
    polledFailed.error.request_id = attempt.id;
    expect(bodyOf(bad)).toBe(JSON.stringify(polledFailed));
    expect(attempt.id).toMatch(/^whd_[0-9a-f]{24}$/);

    const withHook = (await stack.get(user.auth, `/api/v1/tasks/${ok}?include=webhook`)).body;
    expect(withHook.webhook).toMatchObject({ status: "delivered", attempts: 1, response_status: 200, last_error: null });
    expect(withHook.webhook.last_attempt_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(withHook.webhook.delivered_at).toMatch(/\.\d{3}Z$/);
    await ledgerHolds(stack, user.userId);
  }, 40_000);
});
