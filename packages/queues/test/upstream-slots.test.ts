import { randomBytes } from "node:crypto";
import { createRedis, createUpstreamSlots, type SlotRoute } from "../src/index.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = createRedis(REDIS_URL, "blocking");
const prefix = `test_upslots_${randomBytes(4).toString("hex")}`;
const slots = createUpstreamSlots(redis, prefix);
const LEASE = 60_000;
let n = 0;
// Each test its own model: the keys outlive a test.
const model = () => `model-${++n}`;
const one: SlotRoute[] = [{ key: "primary", cap: 1 }];

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

test("at most `cap` tasks hold a route's slots, however many claim at once", async () => {
  const m = model();
  const routes = [{ key: "primary", cap: 3 }];
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => slots.claim(m, routes, 0, `t${i}`, LEASE)));
  expect(answers.filter((answer) => answer.granted)).toHaveLength(3);
  // A holder is granted again (a resumed step), a newcomer still not.
  const holder = answers.findIndex((answer) => answer.granted);
  expect((await slots.claim(m, routes, 0, `t${holder}`, LEASE)).granted).toBe(true);
  expect((await slots.claim(m, routes, 0, "late", LEASE)).granted).toBe(false);
});

test("waiters get freed slots first come, first served; a newcomer does not jump the list", async () => {
  const m = model();
  expect((await slots.claim(m, one, 0, "a", LEASE)).granted).toBe(true);
  for (const task of ["b", "c", "d"]) {
    expect((await slots.claim(m, one, 0, task, LEASE)).granted).toBe(false);
    expect(await slots.wait(m, one, task, LEASE)).toEqual([]);
  }
  // a finishes: b is to be woken; until b claims, the free slot is b's, not a newcomer's.
  expect(await slots.release(m, one, "a")).toEqual(["b"]);
  expect((await slots.claim(m, one, 0, "e", LEASE)).granted).toBe(false);
  expect((await slots.claim(m, one, 0, "c", LEASE)).granted).toBe(false);
  expect((await slots.claim(m, one, 0, "b", LEASE)).granted).toBe(true);
  // c waits again and keeps its place ahead of d and of the newcomer e.
  await slots.wait(m, one, "c", LEASE);
  await slots.wait(m, one, "e", LEASE);
  expect(await slots.release(m, one, "b")).toEqual(["c"]);
  expect((await slots.claim(m, one, 0, "c", LEASE)).granted).toBe(true);
  expect(await slots.release(m, one, "c")).toEqual(["d"]);
  expect((await slots.claim(m, one, 0, "d", LEASE)).granted).toBe(true);
  expect(await slots.release(m, one, "d")).toEqual(["e"]);
});

test("a route at its cap sends the task to the next route; the list waits only when every route is full", async () => {
  const m = model();
  const routes: SlotRoute[] = [
    { key: "replicate:flux", cap: 1 },
    { key: "fal:flux", cap: 1 },
  ];
  expect((await slots.claim(m, routes, 0, "a", LEASE)).granted).toBe(true);
  expect((await slots.claim(m, routes, 0, "b", LEASE)).granted).toBe(false);
  expect((await slots.claim(m, routes, 1, "b", LEASE)).granted).toBe(true);
  expect((await slots.claim(m, routes, 0, "c", LEASE)).granted).toBe(false);
  expect((await slots.claim(m, routes, 1, "c", LEASE)).granted).toBe(false);
  expect(await slots.wait(m, routes, "c", LEASE)).toEqual([]);
  // The fallback frees first: the waiter takes it.
  expect(await slots.release(m, routes, "b")).toEqual(["c"]);
  expect((await slots.claim(m, routes, 0, "c", LEASE)).granted).toBe(false);
  expect((await slots.claim(m, routes, 1, "c", LEASE)).granted).toBe(true);
});

test("a task holds one slot: claiming another route gives back the one it held; a mover does not pass a waiter", async () => {
  const m = model();
  const routes: SlotRoute[] = [
    { key: "a", cap: 1 },
    { key: "b", cap: 1 },
  ];
  await slots.claim(m, routes, 0, "x", LEASE);
  await slots.claim(m, routes, 1, "y", LEASE);
  await slots.wait(m, routes, "w", LEASE);
  // Route a frees while y (on b) tries it again: w is ahead of y.
  expect(await slots.release(m, routes, "x")).toEqual(["w"]);
  expect((await slots.claim(m, routes, 0, "y", LEASE)).granted).toBe(false);
  expect((await slots.claim(m, routes, 0, "w", LEASE)).granted).toBe(true);
  // Nobody waits now: y moves from b to a once a frees, and b's slot is free for a newcomer.
  await slots.release(m, routes, "w");
  expect((await slots.claim(m, routes, 0, "y", LEASE)).granted).toBe(true);
  expect((await slots.claim(m, routes, 1, "z", LEASE)).granted).toBe(true);
  expect((await slots.claim(m, routes, 1, "late", LEASE)).granted).toBe(false);
});

test("a waiter learns at once when a slot freed between its claims and its wait", async () => {
  const m = model();
  await slots.claim(m, one, 0, "a", LEASE);
  expect((await slots.claim(m, one, 0, "b", LEASE)).granted).toBe(false);
  await slots.release(m, one, "a");
  expect(await slots.wait(m, one, "b", LEASE)).toEqual(["b"]);
});

test("a crashed worker's slot is given back when its lease runs out, and the next call wakes the waiter into it", async () => {
  const m = model();
  await slots.claim(m, one, 0, "lost", 200);
  await slots.wait(m, one, "b", LEASE);
  await new Promise((resolve) => setTimeout(resolve, 250));
  // A newcomer finds the room, but b is ahead: b is woken, the newcomer waits.
  expect((await slots.claim(m, one, 0, "c", LEASE)).granted).toBe(false);
  expect(await slots.wait(m, one, "c", LEASE)).toEqual(["b"]);
  expect((await slots.claim(m, one, 0, "b", LEASE)).granted).toBe(true);
});

test("a renewed lease keeps the slot; a waiter whose job is gone leaves the list when its lease runs out", async () => {
  const m = model();
  await slots.claim(m, one, 0, "a", 200);
  await slots.renew(m, one, 0, "a", LEASE);
  await slots.wait(m, one, "ghost", 200);
  await new Promise((resolve) => setTimeout(resolve, 250));
  expect((await slots.claim(m, one, 0, "b", LEASE)).granted).toBe(false);
  // The ghost is gone: b is first now.
  expect(await slots.wait(m, one, "b", LEASE)).toEqual([]);
  expect(await slots.release(m, one, "a")).toEqual(["b"]);
});

test("a release of a task that held nothing and waited nowhere changes nothing", async () => {
  const m = model();
  await slots.claim(m, one, 0, "a", LEASE);
  expect(await slots.release(m, one, "stranger")).toEqual([]);
  expect((await slots.claim(m, one, 0, "b", LEASE)).granted).toBe(false);
});
