import { randomBytes } from "node:crypto";
import { createInlineLease, createRedis, inlineLeaseKeys, type InlineLease } from "../src/index.ts";
import { deleteKeysUnder } from "../../../test/support/redis-keys.ts";
import { testPrefix } from "../../../test/support/run-scope.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = createRedis(REDIS_URL, "blocking");
const other = createRedis(REDIS_URL, "blocking");
const prefix = testPrefix("test_lease");
const keys = inlineLeaseKeys(prefix);
const leases: InlineLease[] = [];
const errors: unknown[] = [];

/** A lease whose take-overs are collected in `taken` (or answered by `takeOver`). */
function lease(leaseMs: number, takeOver?: (attempt: string) => Promise<unknown>, connection = redis) {
  const taken: string[] = [];
  const made = createInlineLease(connection, {
    prefix,
    leaseMs,
    takeOver: takeOver ?? (async (attempt) => taken.push(attempt)),
    onError: (error) => errors.push(error),
  });
  leases.push(made);
  return Object.assign(made, { taken });
}

/** A process that died holding `attempts`: its lease ran out `agoMs` ago and nobody renews it. */
async function deadOwner(attempts: string[], agoMs = 10) {
  const owner = randomBytes(8).toString("hex");
  await redis.zadd(keys.owners, Date.now() - agoMs, owner);
  if (attempts.length > 0) await redis.sadd(`${keys.attemptsPrefix}${owner}`, ...attempts);
  return owner;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterEach(async () => {
  for (const each of leases.splice(0)) await each.close();
  await redis.del(keys.owners);
  expect(errors.splice(0)).toEqual([]);
});
afterAll(async () => {
  await deleteKeysUnder(redis, prefix);
  redis.disconnect();
  other.disconnect();
});

test("a live owner's renewals keep its attempts from being swept, through many lease times", async () => {
  // Not shorter: a lease is only as long as the event loop's longest stall on a loaded machine.
  const live = lease(800);
  await live.register("task-1-a1");
  const sweeper = lease(800);
  // Four lease times, the sweeper beating every 200 ms.
  await sleep(3_200);
  expect(sweeper.taken).toEqual([]);
  expect(live.taken).toEqual([]);
  expect(await redis.smembers(`${keys.attemptsPrefix}${live.owner}`)).toEqual(["task-1-a1"]);
  expect(Number(await redis.zscore(keys.owners, live.owner))).toBeGreaterThan(Date.now());
});

test("an owner whose lease ran out: the next sweep takes its attempts once, and its keys are gone", async () => {
  const dead = await deadOwner(["task-2-a1", "task-3-a1"]);
  // An owner whose lease has not run out yet is left alone.
  const notYet = await deadOwner(["task-4-a1"], -60_000);
  const sweeper = lease(60_000);
  await sweeper.beat();
  expect(sweeper.taken.sort()).toEqual(["task-2-a1", "task-3-a1"]);
  expect(await redis.zscore(keys.owners, dead)).toBeNull();
  expect(await redis.exists(`${keys.attemptsPrefix}${dead}`)).toBe(0);
  await sweeper.beat();
  expect(sweeper.taken).toHaveLength(2);
  expect(await redis.smembers(`${keys.attemptsPrefix}${notYet}`)).toEqual(["task-4-a1"]);
  await redis.del(`${keys.attemptsPrefix}${notYet}`);
});

test("two sweepers beating at once never both take the same owner's attempts", async () => {
  const owners = 40;
  const attempts: string[] = [];
  for (let i = 0; i < owners; i++) {
    const mine = [`task-${i}-a1`, `task-${i}b-a1`];
    attempts.push(...mine);
    await deadOwner(mine);
  }
  // On two connections, as two processes: beats interleave in Redis.
  const one = lease(60_000, undefined, redis);
  const two = lease(60_000, undefined, other);
  for (let i = 0; i < 5; i++) await Promise.all([one.beat(), two.beat()]);
  const taken = [...one.taken, ...two.taken];
  expect(taken.sort()).toEqual(attempts.sort());
  expect(new Set(taken).size).toBe(taken.length);
});

test("finished attempts leave the set in one batch with the next beat, not one call each", async () => {
  const live = lease(60_000);
  await live.beat();
  const set = `${keys.attemptsPrefix}${live.owner}`;
  for (const attempt of ["a-a1", "b-a1", "c-a1", "d-a1"]) await live.register(attempt);
  live.finished("a-a1");
  live.finished("b-a1");
  live.finished("c-a1");
  // Nothing leaves until the beat.
  expect((await redis.smembers(set)).sort()).toEqual(["a-a1", "b-a1", "c-a1", "d-a1"]);
  await live.beat();
  expect(await redis.smembers(set)).toEqual(["d-a1"]);
});

test("an attempt registered again before its removal went out stays under the lease", async () => {
  const live = lease(60_000);
  await live.beat();
  const set = `${keys.attemptsPrefix}${live.owner}`;
  await live.register("a-a1");
  await live.register("b-a1");
  live.finished("a-a1");
  live.finished("b-a1");
  // The hand-off gave its early registration back, then runs here after all.
  await live.register("a-a1");
  await live.beat();
  expect(await redis.smembers(set)).toEqual(["a-a1"]);
  // Its own finish still takes it off.
  live.finished("a-a1");
  await live.beat();
  expect(await redis.smembers(set)).toEqual([]);
});

test("a take-over that fails (Redis trouble adding the job) is tried again at the next beat", async () => {
  let fail = true;
  const tried: string[] = [];
  const sweeper = lease(60_000, async (attempt) => {
    tried.push(attempt);
    if (fail) throw new Error("queue away");
  });
  await deadOwner(["task-5-a1"]);
  await sweeper.beat();
  expect(errors.splice(0)).toHaveLength(1);
  fail = false;
  await sweeper.beat();
  expect(tried).toEqual(["task-5-a1", "task-5-a1"]);
  await sweeper.beat();
  expect(tried).toHaveLength(2);
});

test("close drops the owner and its set: nothing of a closed process is ever swept", async () => {
  const closing = lease(60_000);
  await closing.beat();
  await closing.register("task-6-a1");
  await closing.close();
  expect(await redis.zscore(keys.owners, closing.owner)).toBeNull();
  expect(await redis.exists(`${keys.attemptsPrefix}${closing.owner}`)).toBe(0);
});
