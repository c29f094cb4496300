// The per-customer cap: a customer at WEBHOOK_CUSTOMER_CONCURRENCY, whatever its hosts, has its
// further attempts delayed until places free (the job reads the task's user with the delivery's
// state); another customer on the same receiver runs at once. The customer's cap is held here by
// two places on other host names, as a wildcard DNS record's hanging hosts would hold it.
import { ensureUser } from "@gen/db";
import { newUserId } from "@gen/ids";
import { webhookJobId } from "@gen/queues";
import { updateRows } from "../../../../test/support/db-rows.ts";
import { startReceiver, type Receiver } from "../../../../packages/webhook-sender/test/helpers/receiver.ts";
import { createDeliveryFixture, hookUrl, type DeliveryFixture } from "./helpers/delivery-fixture.ts";

const CUSTOMER_CAP = 2;
let fx: DeliveryFixture;
let hooks: Receiver;

beforeAll(async () => {
  fx = await createDeliveryFixture({ timeoutMs: 5_000, retryDelayMs: 1_000, finalAttemptMs: 30_000, customerConcurrency: CUSTOMER_CAP });
  hooks = await startReceiver({ tls: fx.cert, handler: (_request, response) => response.writeHead(200).end("ok") });
  fx.startWorker();
});
afterAll(async () => {
  await fx.close();
  await hooks?.close();
});

test("a customer at its cap on other host names: its attempt waits delayed, another customer's runs; freed places let it through", async () => {
  const caps = fx.caps();
  const url = hookUrl(hooks.port);
  for (let i = 0; i < CUSTOMER_CAP; i++) expect(await caps.take(`t${i}.wildcard.example`, fx.userId, `held-${i}`)).toEqual({ taken: true });
  expect(await caps.take("t9.wildcard.example", fx.userId, "one-more")).toMatchObject({ taken: false, full: "customer" });

  const capped = await fx.createTask({ url });
  await fx.handOff(capped);
  await fx.waitFor(async () => {
    const job = await fx.queue.getJob(webhookJobId(capped, 1));
    return (job?.attemptsStarted ?? 0) >= 1 && (await job!.getState()) === "delayed";
  });
  expect(await fx.attempts(capped)).toEqual([]);

  // Another customer's attempt to the same receiver runs at once.
  const other = await fx.createTask({ url });
  const otherUser = newUserId();
  await ensureUser(fx.db, otherUser);
  await updateRows(fx.db, "tasks", { id: other }, { userId: otherUser });
  await fx.handOff(other);
  await fx.waitFor(async () => (await fx.delivery(other)).status === "delivered");
  expect((await fx.delivery(capped)).status).toBe("pending");

  // The customer's places freed: its attempt asks again and is delivered.
  for (let i = 0; i < CUSTOMER_CAP; i++) await caps.release(`t${i}.wildcard.example`, fx.userId, `held-${i}`);
  await fx.waitFor(async () => (await fx.delivery(capped)).status === "delivered", 10_000);
  expect((await Promise.all([capped, other].map((id) => fx.attempts(id)))).map((rows) => rows.map((row) => row.outcome))).toEqual([
    ["delivered"],
    ["delivered"],
  ]);
});
