// The generation worker's finish asks for attempt 1's receiver ticket alongside its terminal
// statement (prepareHandOff, the inline hand-off's prepare step), only if one is free: granted and
// settled, the attempt runs inline right after the commit; granted but not settled (the task was
// cancelled meanwhile), the ticket goes back; not granted or Redis trouble, the hand-off after the
// commit routes the attempt as before. Nothing is queued or parked before the task is terminal.
import { TaskStatus } from "@gen/domain";
import { Wf } from "@gen/errors";
import { newTaskId } from "@gen/ids";
import { settleTask } from "@gen/ledger";
import { createRedis, inlineLeaseKeys, webhookJobId, type HostSlots } from "@gen/queues";
import { claimAttempt, claimedWithSettlement, enqueueWebhookAttempt, firstClaimRequest, prepareHandOff, type HandOffDeps } from "@gen/webhook-delivery";
import { startReceiver, type Receiver } from "../../../../packages/webhook-sender/test/helpers/receiver.ts";
import { createDeliveryHostSlots } from "../../src/delivery/delivery-host-slots.ts";
import { createInlineAttempts } from "../../src/delivery/inline-attempt.ts";
import { renderTaskBody } from "../../src/delivery/render-body.ts";
import { hookUrl, type DeliveryFixture } from "./helpers/delivery-fixture.ts";
import { inlineLifecycle } from "./helpers/inline-lifecycle.ts";
import { prismaOf } from "../../../../test/support/prisma-fixtures.ts";

const CAP = 2;
let fx: DeliveryFixture;
const { receivers, inlines } = inlineLifecycle(
  { timeoutMs: 2_000, retryDelayMs: 1_000, finalAttemptMs: 30_000, hostConcurrency: CAP, scratchDatabase: true },
  (made) => (fx = made),
);

async function receiver() {
  const server = await startReceiver({ tls: fx.cert, handler: (_request, response) => void response.writeHead(200).end("ok") });
  receivers.push(server);
  return Object.assign(server, { url: hookUrl(server.port) });
}

/** The generation worker's hand-off deps with the inline hand-off and its prepare step (main.ts wires the delivery worker's). */
function handOffDeps(hostSlots: HostSlots = createDeliveryHostSlots(fx.redis, fx.config)): HandOffDeps {
  const deps = fx.deliveryDeps({ hostSlots });
  const inline = createInlineAttempts(deps, { bound: 8, leaseMs: 5_000, redis: fx.redis });
  inlines.push(inline);
  return { webhookQueue: fx.queue, logger: fx.logger, handOffWebhook: inline.handOff, prepareHandOff: inline.prepare };
}

/** A running task (4 credits reserved) with its `pending` delivery, as the submission left it. */
async function runningTask(url: string): Promise<{ id: string; userId: string; webhookUrl: string; reservedCredits: number }> {
  const id = newTaskId();
  const userId = (await prismaOf(fx.db).user.findFirstOrThrow()).id;
  await prismaOf(fx.db).task.create({
    data: {
      id,
      userId,
      endpoint: "images",
      model: "sim-image-1",
      status: "in_progress",
      input: { prompt: "a lighthouse" },
      webhookUrl: url,
      requestId: "req_000000000000000000000000",
      billingMethod: "flat",
      reservedCredits: 4,
      startedAt: new Date(),
    },
  });
  await prismaOf(fx.db).webhookDelivery.create({ data: { taskId: id, url, status: "pending" } });
  return { id, userId, webhookUrl: url, reservedCredits: 4 };
}

const completed = (id: string) => ({ status: TaskStatus.Completed, output: { image_urls: [`https://cdn.test.example/tasks/${id}/0.png`] }, charge: 4 });
const ticketsOf = (url: string) => fx.redis.zrange(`${fx.config.queuePrefix}:webhook-host:{${new URL(url).host}}:tickets`, 0, -1);
const waitingOf = (url: string) => fx.redis.zrange(`${fx.config.queuePrefix}:webhook-host:{${new URL(url).host}}:waiting`, 0, -1);
const jobState = (taskId: string) => fx.queue.getJobState(webhookJobId(taskId, 1));
const delivered = async (taskId: string) => (await fx.delivery(taskId)).status === "delivered";
const postsFor = (server: Receiver, taskId: string) => server.requests.filter((request) => request.body.toString("utf8").includes(taskId)).length;

test("ticket granted and task settled: attempt 1 runs inline after the commit, one POST, and the ticket is given back", async () => {
  const hooks = await receiver();
  const deps = handOffDeps();
  // More tasks than the host's tickets, one after the other: each is granted only if the one before gave its ticket back.
  // Every other one claimed by the settlement (the generation worker's way), the others by the inline attempt after it.
  for (let i = 0; i < 2 * CAP + 1; i++) {
    const task = await runningTask(hooks.url);
    const handOff = prepareHandOff(deps, task);
    const claim = i % 2 === 0 ? await handOff.claimFirst() : undefined;
    const settled = await settleTask(fx.db, task, completed(task.id), claim);
    expect(settled).not.toBeNull();
    expect(settled!.firstClaim).toEqual(claim ? { requestedBy: null } : undefined);
    // Held across the commit, under the attempt's job id.
    expect(await ticketsOf(hooks.url)).toEqual([webhookJobId(task.id, 1)]);
    await handOff.settled(settled!);
    await fx.waitFor(() => delivered(task.id));
    await fx.waitFor(async () => (await jobState(task.id)) === "unknown");
    expect(postsFor(hooks, task.id)).toBe(1);
    expect((await fx.attempts(task.id)).map((row) => row.outcome)).toEqual(["delivered"]);
    await fx.waitFor(async () => (await ticketsOf(hooks.url)).length === 0);
  }
});

test("ticket granted but the settlement refused (the task was cancelled meanwhile): the ticket is released, nothing sent, no attempt", async () => {
  const hooks = await receiver();
  const deps = handOffDeps();
  const task = await runningTask(hooks.url);
  const handOff = prepareHandOff(deps, task);
  // The gateway's cancel commits first.
  expect(await settleTask(fx.db, task, { status: TaskStatus.Failed, code: Wf.Canceled, charge: 0 })).not.toBeNull();
  expect(await settleTask(fx.db, task, completed(task.id))).toBeNull();
  expect(await ticketsOf(hooks.url)).toEqual([webhookJobId(task.id, 1)]);
  await handOff.abandoned();
  expect(await ticketsOf(hooks.url)).toEqual([]);
  expect(await jobState(task.id)).toBe("unknown");
  expect(await fx.attempts(task.id)).toEqual([]);
  expect((await fx.delivery(task.id)).status).toBe("pending");
  expect(hooks.requests).toHaveLength(0);
  // Not counted as a timeout: the host's next attempts are granted in the main lane.
  expect(await fx.redis.get(`${fx.config.queuePrefix}:webhook-host:{${new URL(hooks.url).host}}:timeouts`)).toBeNull();
});

test("host at its cap: nothing is queued or parked before the commit; after it the attempt is parked as before and runs when a ticket frees", async () => {
  const hooks = await receiver();
  const deps = handOffDeps();
  // Every ticket is held by another attempt of the host.
  const others = Array.from({ length: CAP }, () => newTaskId());
  const slots = createDeliveryHostSlots(fx.redis, fx.config);
  for (const other of others) expect((await slots.acquire(new URL(hooks.url).host, webhookJobId(other, 1), "main")).slot).toBe("granted");
  const task = await runningTask(hooks.url);
  const handOff = prepareHandOff(deps, task);
  const settled = await settleTask(fx.db, task, completed(task.id));
  // Still not terminal as far as the prepare step knew: no job, no place in the waiting list.
  expect(await jobState(task.id)).toBe("unknown");
  expect(await waitingOf(hooks.url)).toEqual([]);
  await handOff.settled(settled!);
  expect(await jobState(task.id)).toBe("delayed");
  expect(await waitingOf(hooks.url)).toEqual([`main|${webhookJobId(task.id, 1)}`]);
  fx.startWorker();
  // A freed ticket promotes the parked job (the release's caller moves it, as the host gate does).
  for (const promoted of await slots.release(new URL(hooks.url).host, webhookJobId(others[0]!, 1), "answered")) {
    await (await fx.queue.getJob(promoted.ticket))!.promote();
  }
  await fx.waitFor(() => delivered(task.id));
  expect(postsFor(hooks, task.id)).toBe(1);
  await slots.release(new URL(hooks.url).host, webhookJobId(others[1]!, 1), "answered");
});

test("Redis trouble with the tickets: nothing held before the commit; after it the attempt is queued as before", async () => {
  const hooks = await receiver();
  const failing: HostSlots = { acquire: () => Promise.reject(new Error("redis down")), release: () => Promise.reject(new Error("redis down")) };
  const deps = handOffDeps(failing);
  const task = await runningTask(hooks.url);
  const handOff = prepareHandOff(deps, task);
  const settled = await settleTask(fx.db, task, completed(task.id));
  await handOff.settled(settled!);
  expect(await jobState(task.id)).toBe("waiting");
  expect(hooks.requests).toHaveLength(0);
  fx.startWorker();
  await fx.waitFor(() => delivered(task.id));
  expect(postsFor(hooks, task.id)).toBe(1);
});

test("the claim folded into the settlement reads the task as the separate claim does: the same body", async () => {
  const hooks = await receiver();
  const outcomes = [
    (id: string) => ({ ...completed(id), tokens: { input: 3, output: 5 } }),
    () => ({ status: TaskStatus.Failed, code: Wf.UpstreamFailed, charge: 0 }),
  ] as const;
  for (const outcome of outcomes) {
    const task = await runningTask(hooks.url);
    const request = firstClaimRequest();
    const folded = claimedWithSettlement(request, (await settleTask(fx.db, task, outcome(task.id), request))!)!;
    expect(folded).not.toBeNull();
    // The same attempt claimed again by the job path's statement (the delivery put back as it was).
    await prismaOf(fx.db).webhookAttempt.deleteMany({ where: { taskId: task.id } });
    await prismaOf(fx.db).webhookDelivery.update({ where: { taskId: task.id }, data: { status: "pending", attempts: 0, lastAttemptAt: null } });
    const separate = (await claimAttempt(fx.db, task.id, 1, folded.startedAt))!;
    expect(folded.task).toEqual(separate.task);
    expect(folded.requestedBy).toBe(separate.requestedBy);
    expect(renderTaskBody(folded.task, folded.id)).toEqual(renderTaskBody(separate.task, folded.id));
  }
});

test("a duplicate job for attempt 1 after the folded claim's attempt does not send again", async () => {
  const hooks = await receiver();
  const deps = handOffDeps();
  const task = await runningTask(hooks.url);
  const handOff = prepareHandOff(deps, task);
  const claim = await handOff.claimFirst();
  expect(claim).toBeDefined();
  const settled = await settleTask(fx.db, task, completed(task.id), claim);
  expect(settled!.firstClaim).toEqual({ requestedBy: null });
  await handOff.settled(settled!);
  await fx.waitFor(() => delivered(task.id));
  await fx.waitFor(async () => (await jobState(task.id)) === "unknown");
  // The reconciler's or a retried hand-off's job for the same attempt.
  await enqueueWebhookAttempt(fx.queue, task.id, 1, 0);
  fx.startWorker();
  await fx.waitFor(async () => (await jobState(task.id)) === "completed");
  expect(postsFor(hooks, task.id)).toBe(1);
  expect((await fx.attempts(task.id)).map((row) => row.outcome)).toEqual(["delivered"]);
});

test("dying after the commit of a folded claim: the attempt was under the lease before the commit; a worker's sweep adds its job, which records attempt_lost and schedules attempt 2; nothing sent", async () => {
  const hooks = await receiver();
  // The dying process: its own Redis link, a lease of 400 ms.
  const link = createRedis(fx.config.redisUrl, "blocking");
  const hostSlots = createDeliveryHostSlots(link, fx.config);
  const inline = createInlineAttempts(fx.deliveryDeps({ hostSlots }), { bound: 8, leaseMs: 400, redis: link });
  inlines.push(inline);
  const deps: HandOffDeps = { webhookQueue: fx.queue, logger: fx.logger, handOffWebhook: inline.handOff, prepareHandOff: inline.prepare };
  const task = await runningTask(hooks.url);
  const handOff = prepareHandOff(deps, task);
  const settled = await settleTask(fx.db, task, completed(task.id), await handOff.claimFirst());
  expect(settled!.firstClaim).toEqual({ requestedBy: null });
  const { attemptsPrefix } = inlineLeaseKeys(fx.queuePrefix);
  const sets = await fx.redis.keys(`${attemptsPrefix}*`);
  const holding = await Promise.all(sets.map((key) => fx.redis.sismember(key, webhookJobId(task.id, 1))));
  expect(holding.filter((member) => member === 1)).toHaveLength(1);
  // The process dies here, before the hand-off: the attempt is claimed and never runs.
  link.disconnect();
  fx.startWorker();
  await fx.waitFor(async () => (await fx.attempts(task.id))[0]?.outcome === "attempt_lost");
  expect(await fx.queue.getJobState(webhookJobId(task.id, 2))).toBe("delayed");
  expect(hooks.requests).toHaveLength(0);
  await fx.queue.remove(webhookJobId(task.id, 2));
});

test("a slow ticket answer does not hold the settlement: it commits without the claim, and the ticket, once granted, serves the hand-off", async () => {
  const hooks = await receiver();
  const real = createDeliveryHostSlots(fx.redis, fx.config);
  // Redis stalled for 300 ms (the worker's connection queues commands while it reconnects).
  const slow: HostSlots = {
    acquire: (...args) => new Promise((resolve) => setTimeout(() => resolve(real.acquire(...args)), 300)),
    release: (...args) => real.release(...args),
  };
  const deps = handOffDeps(slow);
  const task = await runningTask(hooks.url);
  const handOff = prepareHandOff(deps, task);
  // Undefined: the wait ended before the ticket came.
  const claim = await handOff.claimFirst();
  expect(claim).toBeUndefined();
  const settled = await settleTask(fx.db, task, completed(task.id), claim);
  expect(settled!.firstClaim).toBeUndefined();
  await handOff.settled(settled!);
  await fx.waitFor(() => delivered(task.id));
  expect(postsFor(hooks, task.id)).toBe(1);
  // Ran inline with the ticket taken before the commit: no job was left.
  await fx.waitFor(async () => (await jobState(task.id)) === "unknown");
});

/** The inline attempts' lease sets holding attempt 1 of `taskId` (one per process that registered it). */
async function leaseSetsHolding(taskId: string): Promise<number> {
  const sets = await fx.redis.keys(`${inlineLeaseKeys(fx.queuePrefix).attemptsPrefix}*`);
  const holding = await Promise.all(sets.map((key) => fx.redis.sismember(key, webhookJobId(taskId, 1))));
  return holding.filter((member) => member === 1).length;
}

test("the lease registration goes out with the ticket's call, not after its answer: the attempt is under the lease while the ticket is still being asked for", async () => {
  const hooks = await receiver();
  const real = createDeliveryHostSlots(fx.redis, fx.config);
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  // The ticket's answer held back until the test lets it through.
  const held: HostSlots = { acquire: (...args) => answered.then(() => real.acquire(...args)), release: (...args) => real.release(...args) };
  const inline = createInlineAttempts(fx.deliveryDeps({ hostSlots: held }), { bound: 8, leaseMs: 5_000, redis: fx.redis });
  inlines.push(inline);
  const task = await runningTask(hooks.url);
  const preparing = inline.prepare(task.id, task.webhookUrl, task.userId);
  await fx.waitFor(async () => (await leaseSetsHolding(task.id)) === 1, 2_000);
  answer();
  const prepared = await preparing;
  expect(prepared?.claimFirst).toBe(true);
  // The rest as before: claimed by the settlement, sent once, taken off the lease once recorded.
  const request = firstClaimRequest();
  const settled = await settleTask(fx.db, task, completed(task.id), request);
  await prepared!.handOff(settled!.finishedAt!, claimedWithSettlement(request, settled!)!);
  await fx.waitFor(() => delivered(task.id));
  expect(postsFor(hooks, task.id)).toBe(1);
});

test("no ticket (the host at its cap): the registration sent with the ticket's call is taken off the lease at the next beat, nothing held, nothing queued", async () => {
  const hooks = await receiver();
  const slots = createDeliveryHostSlots(fx.redis, fx.config);
  const others = Array.from({ length: CAP }, () => newTaskId());
  for (const other of others) expect((await slots.acquire(new URL(hooks.url).host, webhookJobId(other, 1), "main")).slot).toBe("granted");
  // A lease beating every 100 ms.
  const inline = createInlineAttempts(fx.deliveryDeps({ hostSlots: slots }), { bound: 8, leaseMs: 400, redis: fx.redis });
  inlines.push(inline);
  const task = await runningTask(hooks.url);
  expect(await inline.prepare(task.id, task.webhookUrl, task.userId)).toBeUndefined();
  await fx.waitFor(async () => (await leaseSetsHolding(task.id)) === 0);
  expect((await ticketsOf(hooks.url)).sort()).toEqual(others.map((other) => webhookJobId(other, 1)).sort());
  expect(await jobState(task.id)).toBe("unknown");
  for (const other of others) await slots.release(new URL(hooks.url).host, webhookJobId(other, 1), "answered");
});
