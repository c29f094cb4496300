import { randomBytes } from "node:crypto";
import { createDeliveryCaps, createRedis, type DeliveryCaps } from "../src/index.ts";
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

afterAll(async () => {
  await deleteKeysUnder(redis, prefix);
  redis.disconnect();
});

test("at most `hostCap` attempts per host; one already holding a place takes it again; a release makes room", async () => {
  const caps = capsWith(2);
  const h = host();
  const c = customer();
  expect(await caps.take(h, c, "a")).toBe("taken");
  expect(await caps.take(h, c, "b")).toBe("taken");
  expect(await caps.take(h, c, "c")).toBe("host");
  expect(await caps.take(h, c, "a")).toBe("taken");
  expect(await caps.inFlight("host", h)).toBe(2);
  // Another host is not affected.
  expect(await caps.take(host(), c, "c")).toBe("taken");
  await caps.release(h, c, "a");
  expect(await caps.take(h, c, "c")).toBe("taken");
});

test("at most `customerCap` attempts per customer, whatever its hosts; another customer is not affected", async () => {
  const caps = capsWith(10, 2);
  const c = customer();
  expect(await caps.take(host(), c, "a")).toBe("taken");
  expect(await caps.take(host(), c, "b")).toBe("taken");
  expect(await caps.take(host(), c, "c")).toBe("customer");
  expect(await caps.take(host(), customer(), "d")).toBe("taken");
  expect(await caps.inFlight("customer", c)).toBe(2);
});

test("a full cap takes nothing under the other: a host at its cap does not count against the customer", async () => {
  const caps = capsWith(1, 5);
  const h = host();
  const c = customer();
  expect(await caps.take(h, c, "a")).toBe("taken");
  expect(await caps.take(h, c, "b")).toBe("host");
  expect(await caps.inFlight("customer", c)).toBe(1);
});

test("a place a dead worker never gave back is dropped after its hold", async () => {
  const caps = capsWith(1, 1, 200);
  const h = host();
  const c = customer();
  expect(await caps.take(h, c, "a")).toBe("taken");
  expect(await caps.take(h, c, "b")).toBe("host");
  await new Promise((resolve) => setTimeout(resolve, 250));
  expect(await caps.take(h, c, "b")).toBe("taken");
});
