import { once } from "node:events";
import type net from "node:net";
import tls from "node:tls";
import { closedPort } from "../../../../packages/webhook-sender/test/helpers/receiver.ts";
import { issueServerCert } from "../../../../packages/webhook-sender/test/helpers/test-pki.ts";
import type { RenderBody } from "../../src/delivery/index.ts";
import { renderTaskBody } from "../../src/delivery/render-body.ts";
import { BLOCKED_HOST, HOST, createDeliveryFixture, hookUrl, ISO_MS, type DeliveryFixture } from "./helpers/delivery-fixture.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./helpers/webhook-receiver.ts";

// Long gaps between attempts: each test looks at attempt 1 only.
let fx: DeliveryFixture;
const receivers: WebhookReceiver[] = [];
const servers: net.Server[] = [];
// render_timeout and render_failed come from an injected renderer, chosen per task; every other
// task is rendered by the production renderer.
const renderOverrides = new Map<string, RenderBody>();

beforeAll(async () => {
  fx = await createDeliveryFixture({ timeoutMs: 300, retryDelayMs: 60_000, finalAttemptMs: 120_000 });
  fx.startWorker({ render: (task, deliveryId) => (renderOverrides.get(task.id) ?? renderTaskBody)(task, deliveryId) });
});
afterAll(async () => {
  await fx.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  for (const server of servers) server.close();
});

async function firstAttempt(url: string, prepare?: (taskId: string) => void) {
  const taskId = await fx.createTask({ url });
  prepare?.(taskId);
  await fx.handOff(taskId);
  const attempt = await fx.waitFor(async () => {
    const [first] = await fx.attempts(taskId);
    return first?.finishedAt != null && first;
  });
  return { taskId, attempt, webhook: await fx.webhookObject(taskId), delivery: await fx.delivery(taskId) };
}

async function expectFailure(url: string, lastError: string, responseStatus: number | null = null, prepare?: (taskId: string) => void) {
  const { taskId, attempt, webhook, delivery } = await firstAttempt(url, prepare);
  expect(attempt.outcome).toBe(lastError);
  expect(attempt.responseStatus).toBe(responseStatus);
  expect(webhook).toEqual({
    status: "in_progress",
    attempts: 1,
    response_status: responseStatus,
    last_error: lastError,
    last_attempt_at: expect.stringMatching(ISO_MS),
    delivered_at: null,
  });
  // The failure schedules attempt 2 a retry delay later.
  expect(delivery.nextAttemptAt!.getTime()).toBe(attempt.finishedAt!.getTime() + fx.config.webhookRetryDelayMs);
  return { taskId, attempt };
}

test.each([500, 404, 429, 302])("a %i answer is http_<status>", async (status) => {
  const receiver = await startWebhookReceiver(fx.cert, () => status);
  receivers.push(receiver);
  await expectFailure(hookUrl(receiver.port), `http_${status}`, status);
  expect(receiver.arrivals).toHaveLength(1);
});

test("no answer within WEBHOOK_TIMEOUT_MS is timeout", async () => {
  const receiver = await startWebhookReceiver(fx.cert, () => "hang");
  receivers.push(receiver);
  await expectFailure(hookUrl(receiver.port), "timeout");
});

test("a closed port is connect_failed", async () => {
  await expectFailure(hookUrl(await closedPort()), "connect_failed");
});

test("a name that does not resolve is dns_failed", async () => {
  await expectFailure(hookUrl(443, "nowhere.test.example"), "dns_failed");
});

test("a certificate that does not verify is tls_error", async () => {
  const receiver = await startWebhookReceiver(await issueServerCert([HOST]), () => 200);
  receivers.push(receiver);
  await expectFailure(hookUrl(receiver.port), "tls_error");
  expect(receiver.arrivals).toHaveLength(0);
});

test("a name resolving to an address outside the allow list is blocked_private_address, and nothing connects", async () => {
  const calls = fx.lookup.calls.length;
  await expectFailure(hookUrl(443, BLOCKED_HOST), "blocked_private_address");
  expect(fx.lookup.calls.slice(calls).map((call) => call.hostname)).toEqual([BLOCKED_HOST]);
});

test("a response that is not HTTP is request_failed", async () => {
  const server = tls.createServer({ key: fx.cert.key, cert: fx.cert.cert }, (socket) => socket.end("SMTP ready\r\n\r\n"));
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  await expectFailure(hookUrl((server.address() as net.AddressInfo).port), "request_failed");
});

test("a body that takes longer than 2 s to build is render_timeout; nothing is sent and the task is untouched", async () => {
  const receiver = await startWebhookReceiver(fx.cert);
  receivers.push(receiver);
  let before: Promise<unknown> | undefined;
  const { taskId, attempt } = await expectFailure(hookUrl(receiver.port), "render_timeout", null, (id) => {
    renderOverrides.set(id, () => new Promise(() => undefined));
    before = fx.task(id);
  });
  expect(attempt.durationMs).toBeGreaterThanOrEqual(1_990);
  expect(receiver.arrivals).toHaveLength(0);
  expect(await fx.task(taskId)).toEqual(await before);
});

test("a renderer that throws is render_failed; nothing is sent and the task is untouched", async () => {
  const receiver = await startWebhookReceiver(fx.cert);
  receivers.push(receiver);
  let before: Promise<unknown> | undefined;
  const { taskId } = await expectFailure(hookUrl(receiver.port), "render_failed", null, (id) => {
    renderOverrides.set(id, async () => {
      throw new Error("output column is not renderable");
    });
    before = fx.task(id);
  });
  expect(receiver.arrivals).toHaveLength(0);
  expect(await fx.task(taskId)).toEqual(await before);
});
