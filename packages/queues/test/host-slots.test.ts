import { randomBytes } from "node:crypto";
import { SLOW_HOST_TIMEOUTS, createHostSlots, createRedis, registrableDomain, type HostSlots } from "../src/index.ts";
import { deleteKeysUnder } from "../../../test/support/redis-keys.ts";
import { testPrefix } from "../../../test/support/run-scope.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = createRedis(REDIS_URL, "blocking");
const prefix = testPrefix("test_slots");

const slotsWith = (cap: number, leaseMs = 60_000, customerCap = 1_000): HostSlots =>
  createHostSlots(redis, { prefix, cap, customerCap, leaseMs, slowMemoryMs: 60_000, waitMemoryMs: 60_000 });
let n = 0;
// Each host a registrable domain of its own: timeouts are counted per domain too.
const host = () => `receiver-${++n}.test:443`;
// Each customer a test's own (the keys outlive a test).
const customer = () => `usr_${randomBytes(4).toString("hex")}`;

afterAll(async () => {
  await deleteKeysUnder(redis, prefix);
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

/** Counts the script calls sent while `run` runs (wraps the client's sendCommand; no MONITOR). */
async function scriptCalls<T>(run: () => Promise<T>): Promise<{ result: T; calls: number }> {
  const original = redis.sendCommand;
  let calls = 0;
  redis.sendCommand = function (this: typeof redis, command, ...rest) {
    if (command.name === "evalsha" || command.name === "eval") calls++;
    return original.call(this, command, ...rest);
  } as typeof redis.sendCommand;
  try {
    return { result: await run(), calls };
  } finally {
    redis.sendCommand = original;
  }
}

// A mix that meets every answer: granted, held again, full, parked (waiting and delayed), slow,
// promotions by a release and by a slow answer, forget, and a timeout count.
type Step = (slots: HostSlots, h: string) => Promise<unknown>;
const MIXED: Step[] = [
  (s, h) => s.acquire(h, "a", "main"),
  (s, h) => s.acquire(h, "b", "slow"),
  (s, h) => s.acquire(h, "a", "main"),
  (s, h) => s.acquire(h, "c", "main"),
  (s, h) => s.acquire(h, "d", "main", "wait"),
  (s, h) => s.acquire(h, "e", "slow", true),
  (s, h) => s.acquire(h, "f", "main", true),
  (s, h) => s.release(h, "a", "timeout"),
  (s, h) => s.acquire(h, "g", "main"),
  (s, h) => s.acquire(h, "g", "main", true),
  (s, h) => s.release(h, "e", "forget"),
  (s, h) => s.release(h, "b", "answered"),
  (s, h) => s.release(h, "d", "timeout"),
  (s, h) => s.release(h, "x", "other"),
  (s, h) => s.release(h, "f", "timeout"),
  (s, h) => s.acquire(h, "h", "main", true),
  (s, h) => s.acquire(h, "h", "slow", "wait"),
  (s, h) => s.release(h, "g", "answered"),
];

test("the acquires and releases of one turn for one host are one script call, each answered as the single calls in turn", async () => {
  const slots = slotsWith(2);
  await slots.acquire(host(), "warm-up", "main"); // the script is loaded: one EVALSHA per call from here
  const one = host();
  const sequential: unknown[] = [];
  const singles = await scriptCalls(async () => {
    for (const step of MIXED) sequential.push(await step(slots, one));
  });
  expect(singles.calls).toBe(MIXED.length);
  const gathered = await scriptCalls(() => Promise.all(MIXED.map((step) => step(slots, host()))));
  expect(gathered.calls).toBe(MIXED.length); // each on a host of its own: never sharing a script
  const other = host();
  const together = await scriptCalls(() => Promise.all(MIXED.map((step) => step(slots, other))));
  expect(together.calls).toBe(1);
  expect(together.result).toEqual(sequential);
  // The answers cover every kind, so the comparison means something.
  const slotsSeen = new Set(sequential.flatMap((answer) => (answer && typeof answer === "object" && "slot" in answer ? [answer.slot] : [])));
  expect([...slotsSeen].sort()).toEqual(["full", "granted", "parked", "slow"]);
  expect(sequential.some((answer) => Array.isArray(answer) && answer.length > 0)).toBe(true);
  // Both hosts end in the same state.
  const state = async (h: string) =>
    Promise.all(["tickets", "waiting"].map((key) => redis.zrange(`${prefix}:webhook-host:{${h}}:${key}`, 0, -1))).then(async (sets) => [
      ...sets,
      await redis.get(`${prefix}:webhook-host:{${h}}:timeouts`),
    ]);
  expect(await state(other)).toEqual(await state(one));
});

test("two hosts in one turn are two script calls; a host's many calls are several, in order, never above the cap", async () => {
  const slots = slotsWith(3);
  await slots.acquire(host(), "warm-up", "main");
  const [h1, h2] = [host(), host()];
  const { result, calls } = await scriptCalls(() =>
    Promise.all(Array.from({ length: 300 }, (_, i) => slots.acquire(i % 2 === 0 ? h1 : h2, `t${i}`, "main", true))),
  );
  expect(calls).toBe(4); // 150 calls per host, at most 128 per script
  // First come, first served in each host: its first three are granted, the rest parked in order.
  for (const [offset, h] of [[0, h1] as const, [1, h2] as const]) {
    const mine = result.filter((_, i) => i % 2 === offset);
    expect(mine.map((answer) => answer.slot)).toEqual([...Array<string>(3).fill("granted"), ...Array<string>(147).fill("parked")]);
    expect(await redis.zcard(`${prefix}:webhook-host:{${h}}:tickets`)).toBe(3);
    const waiting = await redis.zrange(`${prefix}:webhook-host:{${h}}:waiting`, 0, 2);
    expect(waiting).toEqual([`main|t${6 + offset}`, `main|t${8 + offset}`, `main|t${10 + offset}`]);
  }
});

test("a Redis error fails every call of the script alike, and only the calls of that host", async () => {
  const slots = slotsWith(2);
  const [broken, fine] = [host(), host()];
  // Hostile state: the host's tickets key is not a sorted set.
  await redis.set(`${prefix}:webhook-host:{${broken}}:tickets`, "not a zset");
  const answers = await Promise.allSettled([
    slots.acquire(broken, "a", "main"),
    slots.acquire(fine, "a", "main"),
    slots.release(broken, "b", "answered"),
    slots.acquire(broken, "c", "main", true),
  ]);
  expect(answers.map((answer) => answer.status)).toEqual(["rejected", "fulfilled", "rejected", "rejected"]);
  const reasons = answers.flatMap((answer) => (answer.status === "rejected" ? [String(answer.reason)] : []));
  expect(new Set(reasons).size).toBe(1);
  expect(reasons[0]).toMatch(/WRONGTYPE/);
});

test("a customer at its cap is slow from the main lane on any of its hosts; the slow lane still runs it; a release makes room", async () => {
  const [a, b] = [customer(), customer()];
  const slots = slotsWith(8, 60_000, 2);
  const [h1, h2, h3] = [host(), host(), host()];
  expect((await slots.acquire(h1, "a", "main", false, a)).slot).toBe("granted");
  expect((await slots.acquire(h2, "b", "main", false, a)).slot).toBe("granted");
  // A third host name costs the customer nothing more: it is at its cap.
  expect((await slots.acquire(h3, "c", "main", false, a)).slot).toBe("slow");
  expect((await slots.acquire(h3, "c", "main", true, a)).slot).toBe("slow");
  expect((await slots.acquire(h3, "c", "slow", false, a)).slot).toBe("granted");
  // A ticket it holds is granted again; another customer on the same host is not held back.
  expect((await slots.acquire(h1, "a", "main", false, a)).slot).toBe("granted");
  expect((await slots.acquire(h3, "d", "main", false, b)).slot).toBe("granted");
  await slots.release(h1, "a", "answered", a);
  await slots.release(h3, "c", "answered", a);
  expect((await slots.acquire(host(), "e", "main", false, a)).slot).toBe("granted");
  expect((await slots.acquire(host(), "f", "main", false, a)).slot).toBe("slow");
  // Without a customer only the host counts.
  expect((await slots.acquire(host(), "g", "main")).slot).toBe("granted");
});

test("a customer's tickets are leases: a dead worker's run out", async () => {
  const [a] = [customer()];
  const slots = slotsWith(8, 200, 1);
  await slots.acquire(host(), "dead-worker", "main", false, a);
  expect((await slots.acquire(host(), "b", "main", false, a)).slot).toBe("slow");
  await new Promise((resolve) => setTimeout(resolve, 250));
  expect((await slots.acquire(host(), "b", "main", false, a)).slot).toBe("granted");
});

test("a waiter promoted into a host's ticket counts for its customer when its job asks again", async () => {
  const [a, b] = [customer(), customer()];
  const slots = slotsWith(1, 60_000, 1);
  const h = host();
  await slots.acquire(h, "a", "main", false, b);
  expect((await slots.acquire(h, "b", "main", true, a)).slot).toBe("parked");
  expect(await slots.release(h, "a", "answered", b)).toEqual([{ lane: "main", ticket: "b" }]);
  expect((await slots.acquire(h, "b", "main", false, a)).slot).toBe("granted");
  expect((await slots.acquire(host(), "c", "main", false, a)).slot).toBe("slow");
});

test("timeouts count across all of a customer's hosts: one each on three hosts sends the customer to the slow lane", async () => {
  const [wild, other] = [customer(), customer()];
  const slots = slotsWith(8);
  for (let i = 0; i < SLOW_HOST_TIMEOUTS; i++) {
    const h = host();
    await slots.acquire(h, `t${i}`, "main", false, wild);
    await slots.release(h, `t${i}`, "timeout", wild);
  }
  const fresh = host();
  expect((await slots.acquire(fresh, "x", "main", false, wild)).slot).toBe("slow");
  expect((await slots.acquire(fresh, "x", "slow", false, wild)).slot).toBe("granted");
  // Another customer on the same host is not slow; the host itself never timed out.
  expect((await slots.acquire(fresh, "y", "main", false, other)).slot).toBe("granted");
  // An answer from any of its receivers ends the run.
  await slots.release(fresh, "x", "answered", wild);
  expect((await slots.acquire(host(), "z", "main", false, wild)).slot).toBe("granted");
});

test("timeouts count across the hosts of one registrable domain, whoever the customers; a public suffix is no domain", async () => {
  const [newcomer, q] = [customer(), customer()];
  const slots = slotsWith(8);
  const site = `shop-${randomBytes(3).toString("hex")}.co.uk`;
  for (let i = 0; i < SLOW_HOST_TIMEOUTS; i++) {
    const owner = customer();
    await slots.acquire(`t${i}.${site}`, `t${i}`, "main", false, owner);
    await slots.release(`t${i}.${site}`, `t${i}`, "timeout", owner);
  }
  expect((await slots.acquire(`new.${site}:8443`, "x", "main", false, newcomer)).slot).toBe("slow");
  expect((await slots.acquire(site, "x2", "main", false, newcomer)).slot).toBe("slow");
  // Neighbours under the same public suffix (co.uk, or a platform's private one) are other domains.
  expect((await slots.acquire(`other-${site}`, "y", "main", false, newcomer)).slot).toBe("granted");
  const platform = `${randomBytes(3).toString("hex")}.github.io`;
  for (let i = 0; i < SLOW_HOST_TIMEOUTS; i++) {
    const owner = customer();
    await slots.acquire(`a${i}.${platform}`, `p${i}`, "main", false, owner);
    await slots.release(`a${i}.${platform}`, `p${i}`, "timeout", owner);
  }
  expect((await slots.acquire(`b.${platform}`, "z", "main", false, q)).slot).toBe("slow");
  expect((await slots.acquire(`someone-else-${platform}`, "z2", "main", false, q)).slot).toBe("granted");
});

test.each([
  ["a.b.example.com:443", "example.com"],
  ["k1-t7.hang.example", "hang.example"],
  ["x.shop.co.uk", "shop.co.uk"],
  ["co.uk", "co.uk"],
  ["team.github.io", "team.github.io"],
  ["deep.team.github.io:8443", "team.github.io"],
  ["127.0.0.1:8443", "127.0.0.1"],
  ["[::1]:443", "[::1]"],
  ["[2001:db8::1]", "[2001:db8::1]"],
  ["localhost:3000", "localhost"],
  ["xn--bcher-kva.example", "xn--bcher-kva.example"],
  ["a.b.example.com.", "example.com"],
  ["", ""],
])("the registrable domain of %j is %j", (given, domain) => {
  expect(registrableDomain(given)).toBe(domain);
});
