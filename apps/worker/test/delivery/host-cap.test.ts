// The per-host cap: a receiver at its cap gets its further attempts delayed (with jitter, asking
// again), so they hold no worker slot; another receiver's attempts meanwhile run as if it were
// alone; once the receiver answers, every delayed attempt is delivered on attempt 1, sent once.
import type { ServerResponse } from "node:http";
import { webhookJobId } from "@gen/queues";
import { startReceiver, type Receiver } from "../../../../packages/webhook-sender/test/helpers/receiver.ts";
import { createDeliveryFixture, hookUrl, type DeliveryFixture } from "./helpers/delivery-fixture.ts";

const CAP = 2;
let fx: DeliveryFixture;
let busy: Receiver & { held: ServerResponse[]; letGo(): void };
let healthy: Receiver;

beforeAll(async () => {
  // The held POSTs must outlast the rest of the first test on a loaded machine: a 10 s timeout.
  fx = await createDeliveryFixture({ timeoutMs: 10_000, retryDelayMs: 1_000, finalAttemptMs: 30_000, hostConcurrency: CAP });
  const held: ServerResponse[] = [];
  let holding = true;
  const receiver = await startReceiver({
    tls: fx.cert,
    handler: (_request, response) => {
      if (holding) held.push(response);
      else response.writeHead(200).end("ok");
    },
  });
  busy = Object.assign(receiver, {
    held,
    letGo() {
      holding = false;
      for (const response of held.splice(0)) response.writeHead(200).end("ok");
    },
  });
  healthy = await startReceiver({ tls: fx.cert, handler: (_request, response) => response.writeHead(200).end("ok") });
  fx.startWorker();
});
afterAll(async () => {
  busy?.letGo();
  await fx.close();
  await busy?.close();
  await healthy?.close();
});

test("a receiver at its cap has the rest of its attempts delayed; others are unaffected; all are delivered once it answers", async () => {
  const busyUrl = hookUrl(busy.port);
  const finishedAt = new Date();
  const busyTasks: string[] = [];
  for (let i = 0; i < 20; i++) {
    const taskId = await fx.createTask({ url: busyUrl, finishedAt });
    busyTasks.push(taskId);
    await fx.handOff(taskId);
  }
  await fx.waitFor(async () => busy.held.length === CAP);
  // Only the cap's worth of the busy receiver's attempts runs; the rest wait delayed.
  await fx.waitFor(async () => {
    const states = await Promise.all(busyTasks.map((id) => fx.queue.getJobState(webhookJobId(id, 1))));
    return states.filter((state) => state === "active").length === CAP && states.filter((state) => state === "delayed").length > 0;
  });
  expect(await fx.caps().inFlight("host", new URL(busyUrl).host)).toBe(CAP);

  // Another receiver's attempts go straight through meanwhile.
  const healthyUrl = hookUrl(healthy.port);
  const healthyTasks: string[] = [];
  const started = Date.now();
  for (let i = 0; i < 5; i++) {
    const taskId = await fx.createTask({ url: healthyUrl });
    healthyTasks.push(taskId);
    await fx.handOff(taskId);
  }
  for (const taskId of healthyTasks) await fx.waitFor(async () => (await fx.delivery(taskId)).status === "delivered");
  // Generous: the attempts ran at once, not after the busy receiver's 10 s timeout.
  expect(Date.now() - started).toBeLessThan(4_000);
  expect(busy.held.length).toBe(CAP);

  // The busy receiver answers: every delayed attempt asks again and is delivered on attempt 1, sent once.
  busy.letGo();
  for (const taskId of busyTasks) await fx.waitFor(async () => (await fx.delivery(taskId)).status === "delivered", 15_000);
  const attempts = await Promise.all(busyTasks.map((id) => fx.attempts(id)));
  expect(attempts.map((rows) => rows.map((row) => row.outcome))).toEqual(busyTasks.map(() => ["delivered"]));
  expect(busy.requests).toHaveLength(20);
  expect(await fx.caps().inFlight("host", new URL(busyUrl).host)).toBe(0);
}, 30_000);

test("an attempt over the cap that no place reaches ends stale_claim at its window's end, unsent", async () => {
  const held: ServerResponse[] = [];
  const hanging = await startReceiver({ tls: fx.cert, handler: (_request, response) => void held.push(response) });
  try {
    const url = hookUrl(hanging.port);
    // Finished long ago: attempt 1's window (task finished + 30 s) leaves it about a second to start.
    const finishedAt = new Date(Date.now() - 19_000);
    const tasks: string[] = [];
    for (let i = 0; i < CAP + 2; i++) tasks.push(await fx.createTask({ url, finishedAt }));
    for (const taskId of tasks) await fx.handOff(taskId);
    await fx.waitFor(async () => held.length === CAP);
    const outcomes = async () => (await Promise.all(tasks.map((id) => fx.attempts(id)))).map((rows) => rows[0]?.outcome ?? null);
    await fx.waitFor(async () => (await outcomes()).filter((outcome) => outcome === "stale_claim").length === 2, 10_000);
    expect(held.length).toBe(CAP);
  } finally {
    for (const response of held) response.destroy();
    await hanging.close();
  }
}, 30_000);
