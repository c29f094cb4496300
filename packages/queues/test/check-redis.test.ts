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
    await expect(checkRedis(redis, url, 500)).rejects.toThrow(
      /^Redis does not answer at 127\.0\.0\.1:\d+ \(REDIS_URL\): no answer within 500 ms \(.*ECONNREFUSED.*\)$/,
    );
    expect(Date.now() - started).toBeLessThan(1500);
  } finally {
    redis.disconnect();
  }
});

test.each(["cluster", "sentinel"] as const)("nothing listening for a %s: one line naming the variable and the nodes", async (mode) => {
  const nodes = [
    { host: "127.0.0.1", port: await closedPort() },
    { host: "::1", port: await closedPort("::1").catch(() => 1) },
  ];
  const config =
    mode === "cluster"
      ? ({ mode, nodes, password: undefined } as const)
      : ({ mode, sentinels: nodes, name: "genmaster", password: undefined, sentinelPassword: undefined } as const);
  const redis = createRedis(config, "request");
  try {
    const where =
      mode === "cluster"
        ? /cluster 127\.0\.0\.1:\d+,\[::1\]:\d+ \(REDIS_CLUSTER_NODES\)/
        : /master "genmaster" of sentinels 127\.0\.0\.1:\d+,\[::1\]:\d+ \(REDIS_SENTINELS\)/;
    const error = await checkRedis(redis, config, 500).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(new RegExp(`^Redis does not answer at ${where.source}: no answer within 500 ms`));
    expect(error?.message).not.toContain("\n");
  } finally {
    redis.disconnect();
  }
});
