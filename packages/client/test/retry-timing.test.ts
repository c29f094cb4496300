import { backoffDelay, parseRetryAfter } from "../src/retry-timing.ts";
import { TokenBucket } from "../src/token-bucket.ts";

test("Retry-After: seconds, fractions, HTTP dates, garbage", () => {
  const now = Date.parse("2026-11-22T10:00:00Z");
  expect(parseRetryAfter("2", now)).toBe(2000);
  expect(parseRetryAfter(" 0.05 ", now)).toBe(50);
  expect(parseRetryAfter("Sun, 22 Nov 2026 10:00:03 GMT", now)).toBe(3000);
  expect(parseRetryAfter("Sun, 22 Nov 2026 09:00:00 GMT", now)).toBe(0);
  expect(parseRetryAfter("soon", now)).toBeNull();
  expect(parseRetryAfter(null, now)).toBeNull();
});

test("backoff doubles from the initial value and stays under the cap", () => {
  const opts = { initialMs: 250, maxMs: 5000 };
  for (let i = 0; i < 50; i++) {
    expect(backoffDelay(0, opts)).toBeGreaterThanOrEqual(125);
    expect(backoffDelay(0, opts)).toBeLessThanOrEqual(250);
    expect(backoffDelay(3, opts)).toBeGreaterThanOrEqual(1000);
    expect(backoffDelay(30, opts)).toBeLessThanOrEqual(5000);
  }
});

test("token bucket: burst, then the refill rate", () => {
  let now = 0;
  const bucket = new TokenBucket(10, 2, () => now);
  expect(bucket.take()).toBe(0);
  expect(bucket.take()).toBe(0);
  expect(bucket.take()).toBe(100);
  now = 100;
  expect(bucket.take()).toBe(0);
  now = 10_000;
  expect([bucket.take(), bucket.take(), bucket.take()]).toEqual([0, 0, 100]);
});
