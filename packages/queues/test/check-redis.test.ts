import { checkRedis, createRedis } from "../src/index.ts";
import { closedPort } from "../../webhook-sender/test/helpers/receiver.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

// The gateway checks its fail-fast connection right after creating it: the check must wait for the
// connection instead of reporting "not writeable" (which made `pnpm start` fail now and then).
test("a request connection checked before it has connected passes", async () => {
  const redis = createRedis(REDIS_URL, "request");
  try {
    expect(redis.status).not.toBe("ready");
    await expect(checkRedis(redis, REDIS_URL)).resolves.toBeUndefined();
  } finally {
    redis.disconnect();
  }
});

test("nothing listening: one line naming the address and the last connection error, within the bound", async () => {
  const url = `redis://127.0.0.1:${await closedPort()}`;
  const redis = createRedis(url, "request");
  const started = Date.now();
  try {
    await expect(checkRedis(redis, url, 500)).rejects.toThrow(/^Redis does not answer at 127\.0\.0\.1:\d+ \(REDIS_URL\): no answer within 500 ms \(.*ECONNREFUSED.*\)$/);
    expect(Date.now() - started).toBeLessThan(1500);
  } finally {
    redis.disconnect();
  }
});
