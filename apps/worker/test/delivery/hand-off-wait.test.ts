// The inline hand-off at a fast host's cap: instead of parking at once, attempt 1 waits in
// its process for a ticket this process frees. The wait is local (a per-process FIFO, not the host's
// waiting list in Redis): each release here offers its ticket, in the same script, to the oldest
// waiter after the parked attempts in Redis; a waiter so granted runs inline. The cap holds; a wait
// that runs out parks; a waiter is under the process's lease, so its death is swept and the attempt
// delivered once.
import type { ServerResponse } from "node:http";
import { createQueue, createRedis, inlineLeaseKeys, QUEUE_NAMES, webhookJobId, type WebhookJobData } from "@gen/queues";
import { startReceiver, type Receiver } from "../../../../packages/webhook-sender/test/helpers/receiver.ts";
import type { DeliveryDeps } from "../../src/delivery/delivery-deps.ts";
import { createDeliveryHostSlots } from "../../src/delivery/delivery-host-slots.ts";
import { routeToLane } from "../../src/delivery/host-gate.ts";
import { createInlineAttempts, type InlineAttemptOptions, type InlineAttempts } from "../../src/delivery/inline-attempt.ts";
import { hookUrl, type DeliveryFixture } from "./helpers/delivery-fixture.ts";
import { inlineLifecycle } from "./helpers/inline-lifecycle.ts";

const CAP = 2;
let fx: DeliveryFixture;
const { receivers, inlines } = inlineLifecycle({ timeoutMs: 2_000, retryDelayMs: 1_000, finalAttemptMs: 30_000, hostConcurrency: CAP }, (made) => (fx = made));

/**
 * A receiver of its own per test (tickets are counted per host and port). `hold()` keeps answers back
 * until `letGo(n)`; otherwise it answers after `delayMs`. `maxInFlight`: the most POSTs it had open at once.
 */
async function receiver(delayMs = 0) {
  const held: ServerResponse[] = [];
  let holding = false;
  let inFlight = 0;
  let maxInFlight = 0;
  const server = await startReceiver({
    tls: fx.cert,
    handler: (_request, response) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      response.on("finish", () => inFlight--);
      if (holding) held.push(response);
      else setTimeout(() => response.writeHead(200).end("ok"), delayMs);
    },
  });
  receivers.push(server);
  return Object.assign(server, {
    url: hookUrl(server.port),
    held,
    maxInFlight: () => maxInFlight,
    hold: () => void (holding = true),
    /** Answers the oldest `count` held POSTs (all when not told), and stops holding when it answers all. */
    letGo(count = held.length) {
      if (count >= held.length) holding = false;
      for (const response of held.splice(0, count)) response.writeHead(200).end("ok");
    },
  });
}

/** A process's inline hand-off: its own host tickets view (HostSlots) over the shared Redis, unless `deps` say otherwise. */
function inlineAttempts(deps: Partial<DeliveryDeps> = {}, options: Partial<InlineAttemptOptions> = {}): InlineAttempts {
  const inline = createInlineAttempts(fx.deliveryDeps(deps), { bound: 8, leaseMs: 5_000, redis: fx.redis, ...options });
  inlines.push(inline);
  return inline;
}

const jobState = (taskId: string) => fx.queue.getJobState(webhookJobId(taskId, 1));
const delivered = async (taskId: string) => (await fx.delivery(taskId)).status === "delivered";
const postsFor = (server: Receiver, taskId: string) => server.requests.filter((request) => request.body.toString("utf8").includes(taskId)).length;
const postIndex = (server: Receiver, taskId: string) => server.requests.findIndex((request) => request.body.toString("utf8").includes(taskId));
const waitingOf = (url: string) => fx.redis.zrange(`${fx.config.queuePrefix}:webhook-host:{${new URL(url).host}}:waiting`, 0, -1);
const ticketsOf = (url: string) => fx.redis.zrange(`${fx.config.queuePrefix}:webhook-host:{${new URL(url).host}}:tickets`, 0, -1);
async function leaseHolders(taskId: string): Promise<string[]> {
  const { attemptsPrefix } = inlineLeaseKeys(fx.queuePrefix);
  const sets = await fx.redis.keys(`${attemptsPrefix}*`);
  const holding = await Promise.all(sets.map(async (key) => ((await fx.redis.sismember(key, webhookJobId(taskId, 1))) === 1 ? key : null)));
  return holding.filter((key): key is string => key !== null);
}

/** One attempt delivered through `inline` first: the process has seen a ticket of the host come back (a fast host, to it). */
async function warmUp(inline: InlineAttempts, url: string): Promise<void> {
  const taskId = await fx.createTask({ url });
  await inline.handOff(taskId, url, fx.userId, new Date());
  await fx.waitFor(() => delivered(taskId));
  await fx.waitFor(async () => (await ticketsOf(url)).length === 0);
}

/** Hands off tasks to `url` through `inline` and waits until `count` POSTs are held at the receiver. */
async function fillCap(inline: InlineAttempts, hooks: Awaited<ReturnType<typeof receiver>>): Promise<string[]> {
  const tasks: string[] = [];
  for (let i = 0; i < CAP; i++) tasks.push(await fx.createTask({ url: hooks.url }));
  for (const taskId of tasks) await inline.handOff(taskId, hooks.url, fx.userId, new Date());
  await fx.waitFor(async () => hooks.held.length === CAP);
  return tasks;
}

/** A fast host (warmed up through a process) at its cap with every POST held, and a hand-off of that process waiting for a ticket. */
async function waiterAtCap() {
  const hooks = await receiver();
  const inline = inlineAttempts();
  await warmUp(inline, hooks.url);
  hooks.hold();
  const running = await fillCap(inline, hooks);
  const waiter = await fx.createTask({ url: hooks.url });
  await inline.handOff(waiter, hooks.url, fx.userId, new Date());
  return { hooks, inline, running, waiter };
}

test("at a fast host's cap the hand-off waits in its process; a ticket this process frees runs it inline: no job, one POST", async () => {
  const { hooks, running, waiter } = await waiterAtCap();
  // Waiting here: no job, no place in the host's waiting list, under the lease, no POST.
  expect(await jobState(waiter)).toBe("unknown");
  expect(await waitingOf(hooks.url)).toEqual([]);
  expect(await leaseHolders(waiter)).toHaveLength(1);
  expect(postsFor(hooks, waiter)).toBe(0);
  // One of the running attempts answers: its release hands the ticket to the waiter, which runs here.
  hooks.letGo(1);
  await fx.waitFor(async () => postsFor(hooks, waiter) === 1);
  hooks.letGo();
  for (const taskId of [...running, waiter]) await fx.waitFor(() => delivered(taskId));
  expect(await jobState(waiter)).toBe("unknown");
  expect((await fx.attempts(waiter)).map((row) => row.outcome)).toEqual(["delivered"]);
  expect(hooks.maxInFlight()).toBeLessThanOrEqual(CAP);
  await fx.waitFor(async () => (await leaseHolders(waiter)).length === 0);
});

test("a host this process never saw a ticket come back from parks at once (a hanging host never fills a process with waiters)", async () => {
  const hooks = await receiver();
  hooks.hold();
  const inline = inlineAttempts();
  await fillCap(inline, hooks);
  const late = await fx.createTask({ url: hooks.url });
  await inline.handOff(late, hooks.url, fx.userId, new Date());
  expect(await jobState(late)).toBe("delayed");
  expect(await waitingOf(hooks.url)).toEqual([`main|${webhookJobId(late, 1)}`]);
  fx.startWorker();
  hooks.letGo();
  await fx.waitFor(() => delivered(late));
  expect(postsFor(hooks, late)).toBe(1);
});

test("a waiter no ticket reaches within its wait parks (a delayed job, a place in the list) and is delivered once", async () => {
  const { hooks, waiter } = await waiterAtCap();
  expect(await jobState(waiter)).toBe("unknown");
  // The wait (half a second) runs out while the host holds every ticket: the attempt parks as before.
  await fx.waitFor(async () => (await jobState(waiter)) === "delayed", 3_000);
  // The park adds the job, then joins the list (a promote must find the job): one step apart.
  await fx.waitFor(async () => (await waitingOf(hooks.url)).length > 0);
  expect(await waitingOf(hooks.url)).toEqual([`main|${webhookJobId(waiter, 1)}`]);
  // Parked, it has its job and is off the lease.
  await fx.waitFor(async () => (await leaseHolders(waiter)).length === 0);
  fx.startWorker();
  hooks.letGo();
  await fx.waitFor(() => delivered(waiter));
  expect(postsFor(hooks, waiter)).toBe(1);
  expect((await fx.attempts(waiter)).map((row) => row.outcome)).toEqual(["delivered"]);
});

test("close ends the waits: a waiter parks before close returns, and is delivered once", async () => {
  const { hooks, inline, waiter } = await waiterAtCap();
  const closing = inline.close();
  await fx.waitFor(async () => (await jobState(waiter)) === "delayed", 1_000);
  fx.startWorker();
  hooks.letGo();
  await closing;
  await fx.waitFor(() => delivered(waiter));
  expect(postsFor(hooks, waiter)).toBe(1);
});

test("parked attempts in the host's waiting list are served before this process's waiters", async () => {
  const hooks = await receiver();
  const inline = inlineAttempts();
  await warmUp(inline, hooks.url);
  fx.startWorker();
  hooks.hold();
  await fillCap(inline, hooks);
  // An attempt parked in Redis (another process's hand-off at the cap), then a waiter here.
  const parked = await fx.createTask({ url: hooks.url });
  await routeToLane(fx.deliveryDeps(), "main", parked, 1, hooks.url, fx.userId, new Date(Date.now() + 30_000));
  expect(await waitingOf(hooks.url)).toEqual([`main|${webhookJobId(parked, 1)}`]);
  const waiter = await fx.createTask({ url: hooks.url });
  await inline.handOff(waiter, hooks.url, fx.userId, new Date());
  expect(await jobState(waiter)).toBe("unknown");
  // One ticket frees here: the release promotes the parked attempt; the waiter's acquire in the same script finds no room.
  hooks.letGo(1);
  await fx.waitFor(async () => postsFor(hooks, parked) === 1);
  expect(postsFor(hooks, waiter)).toBe(0);
  hooks.letGo();
  for (const taskId of [parked, waiter]) await fx.waitFor(() => delivered(taskId));
  expect(postIndex(hooks, parked)).toBeLessThan(postIndex(hooks, waiter));
  expect(postsFor(hooks, waiter)).toBe(1);
  expect(hooks.maxInFlight()).toBeLessThanOrEqual(CAP);
});

test("many hand-offs from two processes and a worker to a capped host: never more than the cap in flight, each sent once, waiters run inline", async () => {
  const hooks = await receiver(15);
  const [one, two] = [inlineAttempts(), inlineAttempts()];
  await warmUp(one, hooks.url);
  await warmUp(two, hooks.url);
  fx.startWorker();
  const tasks: string[] = [];
  for (let i = 0; i < 40; i++) tasks.push(await fx.createTask({ url: hooks.url }));
  // Faster than the host can take them (two at a time, 15 ms each), from both processes in turn.
  const handOffs: Promise<void>[] = [];
  for (const [i, taskId] of tasks.entries()) {
    handOffs.push((i % 2 === 0 ? one : two).handOff(taskId, hooks.url, fx.userId, new Date()));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.all(handOffs);
  for (const taskId of tasks) await fx.waitFor(() => delivered(taskId), 20_000);
  expect(hooks.maxInFlight()).toBeLessThanOrEqual(CAP);
  for (const taskId of tasks) expect(postsFor(hooks, taskId)).toBe(1);
  for (const taskId of tasks) expect((await fx.attempts(taskId)).map((row) => row.outcome)).toEqual(["delivered"]);
  // Far more than the cap's worth ran inline (no job): the rest of the 40 waited here for a ticket rather than parking.
  const states = await Promise.all(tasks.map(jobState));
  expect(states.filter((state) => state === "unknown").length).toBeGreaterThan(2 * CAP);
}, 30_000);

test("a process that dies while its hand-off waits: another process's sweep adds the attempt's job, which delivers it once", async () => {
  const hooks = await receiver();
  // The doomed process: its tickets, lease and queue on a link of its own, cut below.
  const link = createRedis(fx.config.redisUrl, "blocking");
  const linkQueue = createQueue<WebhookJobData>(QUEUE_NAMES.webhook, link, fx.queuePrefix);
  const doomed = inlineAttempts({ hostSlots: createDeliveryHostSlots(link, fx.config), webhookQueue: linkQueue }, { leaseMs: 400, redis: link });
  try {
    await warmUp(doomed, hooks.url);
    // The doomed process holds one of the host's tickets (so its hand-off waits for it), another process the other.
    hooks.hold();
    const [mine, theirs] = [await fx.createTask({ url: hooks.url }), await fx.createTask({ url: hooks.url })];
    await doomed.handOff(mine, hooks.url, fx.userId, new Date());
    await inlineAttempts().handOff(theirs, hooks.url, fx.userId, new Date());
    await fx.waitFor(async () => hooks.held.length === CAP);
    const waiter = await fx.createTask({ url: hooks.url });
    await doomed.handOff(waiter, hooks.url, fx.userId, new Date());
    await fx.waitFor(async () => (await leaseHolders(waiter)).length === 1);
    expect(await jobState(waiter)).toBe("unknown");
    // The doomed process can no longer reach Redis (as dead): its wait runs out, its park fails, and
    // its ticket is never given back (it runs out with its lease); the other process's frees.
    link.disconnect();
    fx.startWorker();
    hooks.letGo();
    await fx.waitFor(() => delivered(waiter));
    expect(postsFor(hooks, waiter)).toBe(1);
    expect((await fx.attempts(waiter)).map((row) => row.outcome)).toEqual(["delivered"]);
    // Its job ran it (the sweep's), once.
    expect((await fx.queue.getJob(webhookJobId(waiter, 1)))?.attemptsStarted).toBe(1);
  } finally {
    await linkQueue.close().catch(() => undefined);
  }
}, 30_000);
