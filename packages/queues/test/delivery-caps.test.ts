import { randomBytes } from "node:crypto";
import { createDeliveryCaps, createRedis, type CapScope, type DeliveryCaps } from "../src/index.ts";
import { deleteKeysUnder } from "../../../test/support/redis-keys.ts";
import { testPrefix } from "../../../test/support/run-scope.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = createRedis(REDIS_URL, "blocking");
const prefix = testPrefix("test_caps");

const capsWith = (hostCap: number, customerCap = 1_000, holdMs = 60_000): DeliveryCaps => createDeliveryCaps(redis, { prefix, hostCap, customerCap, holdMs });
let n = 0;
const host = () => `receiver-${++n}.test:443`;
// Each customer a test's own (the keys outlive a test).
const customer = () => `usr_${randomBytes(4).toString("hex")}`;

/** What `take` answered, as "taken" or the full scope's name. */
async function take(caps: DeliveryCaps, h: string, c: string, attempt: string): Promise<"taken" | CapScope> {
  const answer = await caps.take(h, c, attempt);
  return answer.taken ? "taken" : answer.full;
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterAll(async () => {
  await deleteKeysUnder(redis, prefix);
  redis.disconnect();
});

test("at most `hostCap` attempts per host; one already holding a place takes it again; a release makes room", async () => {
  const caps = capsWith(2);
  const h = host();
  const c = customer();
  expect(await take(caps, h, c, "a")).toBe("taken");
  expect(await take(caps, h, c, "b")).toBe("taken");
  expect(await take(caps, h, c, "c")).toBe("host");
  expect(await take(caps, h, c, "a")).toBe("taken");
  expect(await caps.inFlight("host", h)).toBe(2);
  // Another host is not affected.
  expect(await take(caps, host(), c, "c")).toBe("taken");
  await caps.release(h, c, "a");
  expect(await take(caps, h, c, "c")).toBe("taken");
});

test("at most `customerCap` attempts per customer, whatever its hosts; another customer is not affected", async () => {
  const caps = capsWith(10, 2);
  const c = customer();
  expect(await take(caps, host(), c, "a")).toBe("taken");
  expect(await take(caps, host(), c, "b")).toBe("taken");
  expect(await take(caps, host(), c, "c")).toBe("customer");
  expect(await take(caps, host(), customer(), "d")).toBe("taken");
  expect(await caps.inFlight("customer", c)).toBe(2);
});

test("a full cap takes nothing under the other: a host at its cap does not count against the customer", async () => {
  const caps = capsWith(1, 5);
  const h = host();
  const c = customer();
  expect(await take(caps, h, c, "a")).toBe("taken");
  expect(await take(caps, h, c, "b")).toBe("host");
  expect(await caps.inFlight("customer", c)).toBe(1);
});

test("a place a dead worker never gave back is dropped after its hold", async () => {
  const caps = capsWith(1, 1, 200);
  const h = host();
  const c = customer();
  expect(await take(caps, h, c, "a")).toBe("taken");
  expect(await take(caps, h, c, "b")).toBe("host");
  await sleep(250);
  expect(await take(caps, h, c, "b")).toBe("taken");
});

test("attempts refused at a full cap get turns one after the other, spaced by the time a place is held / the cap", async () => {
  const caps = capsWith(2);
  const h = host();
  const c = customer();
  expect(await take(caps, h, c, "a")).toBe("taken");
  expect(await take(caps, h, c, "b")).toBe("taken");
  // No place given back yet: the oldest place's age is the time a place is held.
  await sleep(100);
  const before = Date.now();
  const first = await caps.take(h, c, "c");
  const second = await caps.take(h, c, "d");
  if (first.taken || second.taken) throw new Error("the host is at its cap");
  expect(first.full).toBe("host");
  // At least 100 ms held / 2 places: a turn 50 ms or more away, the next one 50 ms or more after it
  // (turns are whole ms, rounded up).
  expect(first.turnAt - before).toBeGreaterThanOrEqual(50);
  expect(first.turnAt - before).toBeLessThan(5_000);
  expect(second.turnAt - first.turnAt).toBeGreaterThanOrEqual(49);
});

test("the time a place is held is learnt from the releases: a fast receiver's refused attempts come back within milliseconds", async () => {
  const caps = capsWith(2);
  const h = host();
  const c = customer();
  for (let i = 0; i < 20; i++) {
    expect(await take(caps, h, c, `quick-${i}`)).toBe("taken");
    await caps.release(h, c, `quick-${i}`);
  }
  expect(await take(caps, h, c, "a")).toBe("taken");
  expect(await take(caps, h, c, "b")).toBe("taken");
  const turns: number[] = [];
  for (let i = 0; i < 10; i++) {
    const answer = await caps.take(h, c, `waiting-${i}`);
    if (answer.taken) throw new Error("the host is at its cap");
    turns.push(answer.turnAt);
  }
  // Ten refused attempts of a receiver whose places were each held a few ms: all back within a
  // few ms each (seconds here only on a machine that slows every round trip), far short of the
  // minute-long hold, in the order they were refused.
  expect(turns.at(-1)! - Date.now()).toBeLessThan(3_000);
  expect([...turns].sort((x, y) => x - y)).toEqual(turns);
});

test("a turn past an attempt's last start is not handed out: that attempt is told its last start, and the next turn does not wait behind it", async () => {
  const caps = capsWith(2);
  const h = host();
  const c = customer();
  expect(await take(caps, h, c, "a")).toBe("taken");
  expect(await take(caps, h, c, "b")).toBe("taken");
  // Places held 1 s and more, 2 of them: turns at least 500 ms apart.
  await sleep(1_000);
  const before = Date.now();
  const lastStart = before + 10;
  const late = await caps.take(h, c, "late", lastStart);
  if (late.taken) throw new Error("the host is at its cap");
  expect(late.turnAt).toBe(lastStart);
  const next = await caps.take(h, c, "next");
  if (next.taken) throw new Error("the host is at its cap");
  // The first turn handed out (500-odd ms away), not the one after a turn given to `late` (1 s
  // and more): the bound between them leaves a slow round trip 100 ms.
  expect(next.turnAt - before).toBeGreaterThanOrEqual(500);
  expect(next.turnAt - before).toBeLessThan(800);
});
