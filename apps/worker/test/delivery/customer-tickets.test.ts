// Per-customer tickets: a customer at WEBHOOK_CUSTOMER_CONCURRENCY, whatever its hosts, has its
// further attempts served by the slow lane, on the inline hand-off and on the job path alike (the
// job reads the task's user with the delivery's state); another customer on the same receiver
// runs in the main lane as before. The customer's cap is held here by two tickets on other host
// names, as a wildcard DNS record's hanging hosts would hold it.
import { webhookJobId } from "@gen/queues";
import { startReceiver, type Receiver } from "../../../../packages/webhook-sender/test/helpers/receiver.ts";
import { createDeliveryHostSlots } from "../../src/delivery/delivery-host-slots.ts";
import type { DeliveryWorker } from "../../src/delivery/index.ts";
import { createDeliveryFixture, hookUrl, type DeliveryFixture } from "./helpers/delivery-fixture.ts";

const CUSTOMER_CAP = 2;
let fx: DeliveryFixture;
let worker: DeliveryWorker;
let hooks: Receiver;

beforeAll(async () => {
  fx = await createDeliveryFixture({ timeoutMs: 5_000, retryDelayMs: 1_000, finalAttemptMs: 30_000, customerConcurrency: CUSTOMER_CAP });
  hooks = await startReceiver({ tls: fx.cert, handler: (_request, response) => response.writeHead(200).end("ok") });
  worker = fx.startWorker();
});
afterAll(async () => {
  await fx.close();
  await hooks?.close();
});

const lanesOf = async (taskId: string) => {
  const id = webhookJobId(taskId, 1);
  return { main: await fx.queue.getJobState(id), slow: await worker.slowQueue.getJobState(id) };
};

test("a customer at its cap on other host names: its attempts go to the slow lane (hand-off and job), another customer's run inline", async () => {
  const slots = createDeliveryHostSlots(fx.redis, fx.config);
  const url = hookUrl(hooks.port);
  for (let i = 0; i < CUSTOMER_CAP; i++) expect((await slots.acquire(`t${i}.wildcard.example`, `held-${i}`, "main", false, fx.userId)).slot).toBe("granted");

  // The job path: the job reads the customer with the delivery's state.
  const queued = await fx.createTask({ url });
  await fx.handOff(queued);
  await fx.waitFor(async () => (await fx.delivery(queued)).status === "delivered");
  expect((await lanesOf(queued)).slow).toBe("completed");
  // The hand-off: the generation worker gives it the task's user.
  const handedOff = await fx.createTask({ url });
  await worker.handOff(handedOff, url, fx.userId, (await fx.task(handedOff)).finishedAt!);
  await fx.waitFor(async () => (await fx.delivery(handedOff)).status === "delivered");
  expect((await lanesOf(handedOff)).slow).toBe("completed");

  // Another customer's attempt to the same receiver: inline, no job in either lane.
  const other = await fx.createTask({ url });
  await worker.handOff(other, url, "usr_another_customer", (await fx.task(other)).finishedAt!);
  await fx.waitFor(async () => (await fx.delivery(other)).status === "delivered");
  expect(await lanesOf(other)).toEqual({ main: "unknown", slow: "unknown" });

  // The customer's tickets freed: its next attempt runs inline again.
  for (let i = 0; i < CUSTOMER_CAP; i++) await slots.release(`t${i}.wildcard.example`, `held-${i}`, "answered", fx.userId);
  const after = await fx.createTask({ url });
  await worker.handOff(after, url, fx.userId, (await fx.task(after)).finishedAt!);
  await fx.waitFor(async () => (await fx.delivery(after)).status === "delivered");
  expect(await lanesOf(after)).toEqual({ main: "unknown", slow: "unknown" });
  expect((await Promise.all([queued, handedOff, other, after].map((id) => fx.attempts(id)))).map((rows) => rows.map((row) => row.outcome))).toEqual([
    ["delivered"],
    ["delivered"],
    ["delivered"],
    ["delivered"],
  ]);
});
