import { randomBytes } from "node:crypto";
import { SLOW_HOST_TIMEOUTS, createHostSlots, createRedis, type HostSlots } from "../src/index.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = createRedis(REDIS_URL, "blocking");
const prefix = `test_slots_${randomBytes(4).toString("hex")}`;
const HOST = "receiver.test:443";

const slotsWith = (cap: number, leaseMs = 60_000): HostSlots => createHostSlots(redis, { prefix, cap, leaseMs, slowMemoryMs: 60_000, waitMemoryMs: 60_000 });
let n = 0;
const host = () => `${HOST}-${++n}`;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

test("at most `cap` tickets per host; a ticket already held is granted again", async () => {
  const slots = slotsWith(2);
  const h = host();
  expect((await slots.acquire(h, "a", "main")).slot).toBe("granted");
  expect((await slots.acquire(h, "b", "main")).slot).toBe("granted");
  expect((await slots.acquire(h, "c", "main")).slot).toBe("full");
  expect((await slots.acquire(h, "a", "main")).slot).toBe("granted");
  // Another host is not affected.
  expect((await slots.acquire(host(), "c", "main")).slot).toBe("granted");
});

test("a freed ticket goes to the oldest parked waiter, in its lane, and is then held by it", async () => {
  const slots = slotsWith(1);
  const h = host();
  expect((await slots.acquire(h, "a", "main")).slot).toBe("granted");
  expect((await slots.acquire(h, "b", "slow", true)).slot).toBe("parked");
  expect((await slots.acquire(h, "c", "main", true)).slot).toBe("parked");
  expect(await slots.release(h, "a", "answered")).toEqual([{ lane: "slow", ticket: "b" }]);
  // The promoted waiter holds the ticket: a newcomer cannot take it, the waiter's own run can.
  expect((await slots.acquire(h, "d", "main")).slot).toBe("full");
  expect((await slots.acquire(h, "b", "slow")).slot).toBe("granted");
  expect(await slots.release(h, "b", "answered")).toEqual([{ lane: "main", ticket: "c" }]);
  expect(await slots.release(h, "c", "answered")).toEqual([]);
});

test("forget takes an attempt off the waiting list and frees its ticket for the next waiter", async () => {
  const slots = slotsWith(1);
  const h = host();
  await slots.acquire(h, "a", "main");
  await slots.acquire(h, "b", "main", true);
  await slots.acquire(h, "c", "main", true);
  // b ran at the end of its window without a ticket: it leaves the list; a's release then goes to c.
  expect(await slots.release(h, "b", "forget")).toEqual([]);
  expect(await slots.release(h, "a", "other")).toEqual([{ lane: "main", ticket: "c" }]);
});

test("an expired lease makes room, and the next call on the host promotes the waiter into it", async () => {
  const slots = slotsWith(1, 200);
  const h = host();
  await slots.acquire(h, "dead-worker", "main");
  expect((await slots.acquire(h, "b", "main", true)).slot).toBe("parked");
  await new Promise((resolve) => setTimeout(resolve, 250));
  // A newcomer finds the room but the waiter is older: it gets the ticket, the newcomer parks.
  const answer = await slots.acquire(h, "c", "main", true);
  expect(answer).toEqual({ slot: "parked", promoted: [{ lane: "main", ticket: "b" }] });
});

test("a host that keeps timing out is slow from the main lane, not from the slow lane; an answer clears it", async () => {
  const slots = slotsWith(8);
  const h = host();
  for (let i = 0; i < SLOW_HOST_TIMEOUTS; i++) {
    await slots.acquire(h, `t${i}`, "main");
    await slots.release(h, `t${i}`, "timeout");
  }
  expect((await slots.acquire(h, "x", "main")).slot).toBe("slow");
  expect((await slots.acquire(h, "x", "slow")).slot).toBe("granted");
  await slots.release(h, "x", "answered");
  expect((await slots.acquire(h, "y", "main")).slot).toBe("granted");
});

test("at its cap with a timeout behind it, a host is slow from the main lane unless the attempt parks", async () => {
  const slots = slotsWith(1);
  const h = host();
  await slots.acquire(h, "a", "main");
  await slots.release(h, "a", "timeout");
  await slots.acquire(h, "b", "main");
  expect((await slots.acquire(h, "c", "main")).slot).toBe("slow");
  expect((await slots.acquire(h, "c", "main", true)).slot).toBe("parked");
});

test("a waiter in its worker joins the list in turn, keeps its place when it parks later, and meets the slow rule", async () => {
  const slots = slotsWith(1);
  const h = host();
  await slots.acquire(h, "a", "main");
  expect((await slots.acquire(h, "b", "main", "wait")).slot).toBe("parked");
  expect((await slots.acquire(h, "c", "main", true)).slot).toBe("parked");
  // b gave up waiting in its worker and parked: still ahead of c.
  expect((await slots.acquire(h, "b", "main", true)).slot).toBe("parked");
  expect(await slots.release(h, "a", "answered")).toEqual([{ lane: "main", ticket: "b" }]);
  expect((await slots.acquire(h, "b", "main", "wait")).slot).toBe("granted");
  await slots.release(h, "b", "timeout");
  await slots.acquire(h, "c", "main");
  expect((await slots.acquire(h, "d", "main", "wait")).slot).toBe("slow");
});
