// Inline first attempts: with its receiver's ticket, attempt 1 runs in the process that
// handed it off (no job, under the process's lease); otherwise, and past the bound, on Redis or
// PostgreSQL trouble and while closing, it is queued as before. A process whose lease runs out has
// its attempts taken over by another's sweep; what the lease does not cover, the reconciler repairs.
import type { ServerResponse } from "node:http";
import { createDatabase } from "@gen/db";
import { createRedis, inlineLeaseKeys, webhookJobId, type HostSlots } from "@gen/queues";
import { startReceiver, type Receiver } from "../../../../packages/webhook-sender/test/helpers/receiver.ts";
import { createScratchDatabase } from "../../../../test/support/scratch-database.ts";
import type { DeliveryDeps } from "../../src/delivery/delivery-deps.ts";
import { createDeliveryHostSlots } from "../../src/delivery/delivery-host-slots.ts";
import { routeToLane } from "../../src/delivery/host-gate.ts";
import { reconcileDeliveries } from "../../src/delivery/index.ts";
import { createInlineAttempts, type InlineAttemptOptions } from "../../src/delivery/inline-attempt.ts";
import { createDeliveryFixture, hookUrl, type DeliveryFixture } from "./helpers/delivery-fixture.ts";

const CAP = 2;
const TIMEOUT_MS = 2_000;
let database: Awaited<ReturnType<typeof createScratchDatabase>>;
let fx: DeliveryFixture;
const receivers: Receiver[] = [];

beforeAll(async () => {
  // A database of its own: the reconciler below looks at every delivery in it.
  database = await createScratchDatabase();
  fx = await createDeliveryFixture({ timeoutMs: TIMEOUT_MS, retryDelayMs: 1_000, finalAttemptMs: 30_000, hostConcurrency: CAP, databaseUrl: database.url });
}, 60_000);
afterEach(async () => {
  await fx.stopWorkers();
  for (const receiver of receivers.splice(0)) await receiver.close();
});
afterAll(async () => {
  await fx.close();
  await database.drop();
});

/** A receiver of its own per test (tickets are counted per host and port); `hold()` keeps answers back until `letGo()`. */
async function receiver() {
  const held: ServerResponse[] = [];
  let holding = false;
  const server = await startReceiver({
    tls: fx.cert,
    handler: (_request, response) => {
      if (holding) held.push(response);
      else response.writeHead(200).end("ok");
    },
  });
  receivers.push(server);
  return Object.assign(server, {
    url: hookUrl(server.port),
    held,
    hold: () => void (holding = true),
    letGo() {
      holding = false;
      for (const response of held.splice(0)) response.writeHead(200).end("ok");
    },
  });
}

const deliveryDeps = (overrides: Partial<DeliveryDeps> = {}) => fx.deliveryDeps(overrides);

/** An inline hand-off on its own, with a lease of `leaseMs` (5 s, as the delivery lock, unless told). */
const inlineAttempts = (deps: DeliveryDeps, options: Partial<InlineAttemptOptions> = {}) =>
  createInlineAttempts(deps, { bound: 8, leaseMs: 5_000, redis: fx.redis, ...options });

const jobState = (taskId: string) => fx.queue.getJobState(webhookJobId(taskId, 1));
const leaseKeys = () => inlineLeaseKeys(fx.queuePrefix);
/** The owners whose lease set holds attempt 1 of the task. */
async function leaseHolders(taskId: string): Promise<string[]> {
  const { attemptsPrefix } = leaseKeys();
  const sets = await fx.redis.keys(`${attemptsPrefix}*`);
  const holding = await Promise.all(
    sets.map(async (key) => ((await fx.redis.sismember(key, webhookJobId(taskId, 1))) === 1 ? key.slice(attemptsPrefix.length) : null)),
  );
  return holding.filter((owner): owner is string => owner !== null);
}
const live = async (owner: string) => Number(await fx.redis.zscore(leaseKeys().owners, owner)) > Date.now();

/** CAP tasks that ended a second ago, each of whose attempt 1 took one of the host's tickets to run inline, and went no further. */
async function ticketsTakenInline(url: string): Promise<string[]> {
  const finishedAt = new Date(Date.now() - 1_000);
  const tasks: string[] = [];
  for (let i = 0; i < CAP; i++) tasks.push(await fx.createTask({ url, finishedAt }));
  for (const taskId of tasks) await routeToLane(deliveryDeps(), "main", taskId, 1, url, fx.userId, new Date(finishedAt.getTime() + 30_000), () => true);
  return tasks;
}
const delivered = async (taskId: string) => (await fx.delivery(taskId)).status === "delivered";
const postsFor = (server: Receiver, taskId: string) => server.requests.filter((request) => request.body.toString("utf8").includes(taskId)).length;

test("with a ticket, attempt 1 runs where it was handed off: no job, one POST, its ticket given back, and it leaves the lease", async () => {
  const hooks = await receiver();
  const worker = fx.startWorker();
  const tasks: string[] = [];
  // More tasks than the host's tickets, one after the other: each finds a free ticket only if the one before gave its back.
  for (let i = 0; i < 2 * CAP + 1; i++) {
    const taskId = await fx.createTask({ url: hooks.url });
    tasks.push(taskId);
    await worker.handOff(taskId, hooks.url, fx.userId, (await fx.task(taskId)).finishedAt!);
    await fx.waitFor(() => delivered(taskId));
    // No job at any point: the process's lease covers the attempt.
    expect(await jobState(taskId)).toBe("unknown");
    expect(postsFor(hooks, taskId)).toBe(1);
    expect((await fx.attempts(taskId)).map((row) => row.outcome)).toEqual(["delivered"]);
    // The ticket goes back after the POST, before the finish statement.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // Finished attempts leave the lease with a later beat, in one batch.
  await fx.waitFor(async () => (await Promise.all(tasks.map(leaseHolders))).every((owners) => owners.length === 0));
});

test("a job for the same attempt (a duplicate from the reconciler) and the inline attempt send once", async () => {
  const hooks = await receiver();
  const worker = fx.startWorker();
  const taskId = await fx.createTask({ url: hooks.url });
  await fx.handOff(taskId);
  await fx.waitFor(() => delivered(taskId));
  // The inline claim finds nothing pending: no POST, and the ticket is given back.
  await worker.handOff(taskId, hooks.url, fx.userId, (await fx.task(taskId)).finishedAt!);
  const others: string[] = [];
  for (let i = 0; i < CAP; i++) others.push(await fx.createTask({ url: hooks.url }));
  await new Promise((resolve) => setTimeout(resolve, 50));
  for (const other of others) await worker.handOff(other, hooks.url, fx.userId, new Date());
  for (const other of others) await fx.waitFor(() => delivered(other));
  expect(postsFor(hooks, taskId)).toBe(1);
  // Both ran inline (none was taken by the worker): no ticket was left behind by the claim that found nothing.
  const jobs = await Promise.all(others.map((id) => fx.queue.getJob(webhookJobId(id, 1))));
  expect(jobs.map((job) => job?.processedOn)).toEqual(others.map(() => undefined));
});

test("past its bound of inline attempts, a process queues the hand-off", async () => {
  const hooks = await receiver();
  hooks.hold();
  const inline = inlineAttempts(deliveryDeps(), { bound: 1 });
  const [first, second] = [await fx.createTask({ url: hooks.url }), await fx.createTask({ url: hooks.url })];
  await inline.handOff(first, hooks.url, fx.userId, new Date());
  await fx.waitFor(async () => hooks.held.length === 1);
  await inline.handOff(second, hooks.url, fx.userId, new Date());
  // The running one has no job (its process's lease covers it); the second is queued to run now.
  expect(await jobState(first)).toBe("unknown");
  expect(await leaseHolders(first)).toHaveLength(1);
  expect(await jobState(second)).toBe("waiting");
  hooks.letGo();
  await inline.close();
  expect(await delivered(first)).toBe(true);
  expect(await jobState(first)).toBe("unknown");
  fx.startWorker();
  await fx.waitFor(() => delivered(second));
});

test("Redis trouble with the tickets: the hand-off queues the attempt, as before", async () => {
  const hooks = await receiver();
  const failing: HostSlots = { acquire: () => Promise.reject(new Error("redis down")), release: () => Promise.reject(new Error("redis down")) };
  const inline = inlineAttempts(deliveryDeps({ hostSlots: failing }));
  const taskId = await fx.createTask({ url: hooks.url });
  await inline.handOff(taskId, hooks.url, fx.userId, new Date());
  expect(await jobState(taskId)).toBe("waiting");
  await inline.close();
  expect(hooks.requests).toHaveLength(0);
});

test("a claim that fails (PostgreSQL unreachable) adds the attempt's job to run now, which sends the attempt once", async () => {
  const hooks = await receiver();
  const unreachable = createDatabase("postgresql://postgres@127.0.0.1:1/none", { connectTimeoutMs: 200 });
  try {
    const inline = inlineAttempts(deliveryDeps({ db: unreachable }));
    const taskId = await fx.createTask({ url: hooks.url });
    await inline.handOff(taskId, hooks.url, fx.userId, new Date());
    await inline.close();
    expect(await jobState(taskId)).toBe("waiting");
    expect((await fx.delivery(taskId)).status).toBe("pending");
    // Handed to the job: off the lease (which close dropped).
    expect(await leaseHolders(taskId)).toEqual([]);
    fx.startWorker();
    await fx.waitFor(() => delivered(taskId));
    expect(postsFor(hooks, taskId)).toBe(1);
  } finally {
    await unreachable.$disconnect();
  }
});

test("close waits for running inline attempts; later hand-offs are queued; then the lease is dropped", async () => {
  const hooks = await receiver();
  hooks.hold();
  const inline = inlineAttempts(deliveryDeps());
  const running = await fx.createTask({ url: hooks.url });
  await inline.handOff(running, hooks.url, fx.userId, new Date());
  await fx.waitFor(async () => hooks.held.length === 1);
  let closed = false;
  const closing = inline.close().then(() => (closed = true));
  const later = await fx.createTask({ url: hooks.url });
  await inline.handOff(later, hooks.url, fx.userId, new Date());
  expect(await jobState(later)).toBe("waiting");
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(closed).toBe(false);
  hooks.letGo();
  await closing;
  // Recorded before close returned; the closed process leaves no lease for a sweep to find.
  expect(await delivered(running)).toBe(true);
  expect(await jobState(running)).toBe("unknown");
  expect(await leaseHolders(running)).toEqual([]);
  expect(await fx.redis.zcard(leaseKeys().owners)).toBe(0);
});

test("a live inline attempt's lease is renewed: sweeps through many lease times never take it over; recorded, nothing is left", async () => {
  const hooks = await receiver();
  hooks.hold();
  fx.startWorker();
  // Another process sweeping every 25 ms.
  const sweeper = inlineAttempts(deliveryDeps(), { leaseMs: 100 });
  const inline = inlineAttempts(deliveryDeps(), { leaseMs: 400 });
  const taskId = await fx.createTask({ url: hooks.url });
  await inline.handOff(taskId, hooks.url, fx.userId, (await fx.task(taskId)).finishedAt!);
  await fx.waitFor(async () => hooks.held.length === 1);
  const [owner] = await leaseHolders(taskId);
  // Several lease times pass while the POST is out: the lease is renewed each time, the attempt never taken over.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  expect(await live(owner!)).toBe(true);
  expect(await leaseHolders(taskId)).toEqual([owner]);
  expect(await jobState(taskId)).toBe("unknown");
  expect((await fx.attempts(taskId)).map((row) => row.outcome)).toEqual([null]);
  hooks.letGo();
  await inline.close();
  await sweeper.close();
  expect((await fx.attempts(taskId)).map((row) => row.outcome)).toEqual(["delivered"]);
  expect(await jobState(taskId)).toBe("unknown");
  expect(postsFor(hooks, taskId)).toBe(1);
});

test("a process whose lease runs out mid-attempt (Redis link gone, as a stall or a death): a worker's sweep adds the job, which records attempt_lost and schedules attempt 2; the late report is dropped", async () => {
  const hooks = await receiver();
  hooks.hold();
  const link = createRedis(fx.config.redisUrl, "blocking");
  const inline = inlineAttempts(deliveryDeps({ hostSlots: createDeliveryHostSlots(link, fx.config) }), { leaseMs: 400, redis: link });
  const taskId = await fx.createTask({ url: hooks.url });
  await inline.handOff(taskId, hooks.url, fx.userId, (await fx.task(taskId)).finishedAt!);
  await fx.waitFor(async () => hooks.held.length === 1);
  expect((await fx.delivery(taskId)).status).toBe("in_progress");
  const [owner] = await leaseHolders(taskId);
  // The process can no longer renew: its lease runs out 400 ms after the last beat.
  link.disconnect();
  const cut = Date.now();
  fx.startWorker();
  const lost = await fx.waitFor(async () => {
    const [first] = await fx.attempts(taskId);
    return first?.finishedAt != null && first;
  });
  // The lease (400 ms) plus the worker's sweep interval (lock / 4: the fixture's lock is 5 s), and the job's run.
  expect(lost.finishedAt!.getTime() - cut).toBeLessThan(5_000);
  expect(lost.outcome).toBe("attempt_lost");
  expect(await fx.queue.getJobState(webhookJobId(taskId, 2))).toBe("delayed");
  // Taken by the sweep: the owner and its set are gone.
  expect(await fx.redis.zscore(leaseKeys().owners, owner!)).toBeNull();
  expect(await leaseHolders(taskId)).toEqual([]);

  hooks.letGo();
  await inline.close();
  expect((await fx.attempts(taskId)).map((row) => row.outcome)).toEqual(["attempt_lost"]);
  expect(postsFor(hooks, taskId)).toBe(1);
  await fx.queue.remove(webhookJobId(taskId, 2));
});

test("an owner that died before its claim: the sweep adds attempt 1's job, which takes the dead attempt's ticket and sends once", async () => {
  const hooks = await receiver();
  // Every ticket of the host is taken by an inline attempt whose process died after registering it, before its claim.
  const tasks = await ticketsTakenInline(hooks.url);
  const dead = "dead-owner";
  await fx.redis.zadd(leaseKeys().owners, Date.now() - 1, dead);
  await fx.redis.sadd(`${leaseKeys().attemptsPrefix}${dead}`, ...tasks.map((taskId) => webhookJobId(taskId, 1)));

  const started = Date.now();
  fx.startWorker();
  for (const taskId of tasks) await fx.waitFor(() => delivered(taskId));
  // Well inside the tickets' lease (render 2 s + timeout + 5 s): each job asked for its own ticket, held already.
  expect(Date.now() - started).toBeLessThan(4_000);
  for (const taskId of tasks) expect(postsFor(hooks, taskId)).toBe(1);
  for (const taskId of tasks) expect((await fx.attempts(taskId)).map((row) => row.outcome)).toEqual(["delivered"]);
  expect(await fx.redis.zscore(leaseKeys().owners, dead)).toBeNull();
});

test("dying after the claim with the lease gone too (Redis lost it): the reconciler records attempt_lost and schedules attempt 2; the late report changes nothing", async () => {
  const hooks = await receiver();
  hooks.hold();
  const inline = inlineAttempts(deliveryDeps());
  const taskId = await fx.createTask({ url: hooks.url });
  await inline.handOff(taskId, hooks.url, fx.userId, (await fx.task(taskId)).finishedAt!);
  await fx.waitFor(async () => hooks.held.length === 1);
  expect((await fx.delivery(taskId)).status).toBe("in_progress");
  for (const owner of await leaseHolders(taskId)) await fx.redis.del(`${leaseKeys().attemptsPrefix}${owner}`);

  // What is left is an open attempt and no job. Later than the longest attempt (render 2 s + the
  // timeout) plus the grace, the reconciler finds it.
  const later = () => new Date(Date.now() + 2_000 + TIMEOUT_MS + 1_000);
  const result = await reconcileDeliveries({ config: fx.config, db: fx.db, webhookQueue: fx.queue, logger: fx.logger, now: later }, { graceMs: 0 });
  expect(result.lost).toBe(1);
  expect((await fx.attempts(taskId)).map((row) => row.outcome)).toEqual(["attempt_lost"]);
  expect(await fx.queue.getJobState(webhookJobId(taskId, 2))).toBe("delayed");

  // The receiver answers after all: the attempt was already recorded, so the schedule is not touched twice.
  hooks.letGo();
  await inline.close();
  expect((await fx.attempts(taskId)).map((row) => row.outcome)).toEqual(["attempt_lost"]);
  const delivery = await fx.delivery(taskId);
  expect([delivery.status, delivery.attempts, delivery.lastError]).toEqual(["in_progress", 1, "attempt_lost"]);
  expect(postsFor(hooks, taskId)).toBe(1);
  await fx.queue.remove(webhookJobId(taskId, 2));
});

test("dying between the ticket and the registration: the reconciler enqueues attempt 1, whose job uses the ticket the dead attempt held", async () => {
  const hooks = await receiver();
  // Every ticket of the host is taken by an inline attempt that never got to its registration or its claim.
  const tasks = await ticketsTakenInline(hooks.url);
  for (const taskId of tasks) {
    expect(await jobState(taskId)).toBe("unknown");
    expect((await fx.delivery(taskId)).status).toBe("pending");
  }

  const result = await reconcileDeliveries({ config: fx.config, db: fx.db, webhookQueue: fx.queue, logger: fx.logger }, { graceMs: 0 });
  expect(result.enqueued).toBeGreaterThanOrEqual(tasks.length);
  const started = Date.now();
  fx.startWorker();
  for (const taskId of tasks) await fx.waitFor(() => delivered(taskId));
  // Well inside the tickets' lease (render 2 s + timeout + 5 s): each job asked for its own ticket, held already.
  expect(Date.now() - started).toBeLessThan(4_000);
  for (const taskId of tasks) expect(postsFor(hooks, taskId)).toBe(1);
});
