// The two ioredis races behind the failover kills' old failures, made to happen on purpose (they
// otherwise need a busy machine and luck): a client from createRedis must come back from each.
// Both reach into ioredis internals to place the race; the fixes they check are
// packages/queues/src/settle-cluster-connect.ts and revive-ended-client.ts.
import type { RedisConfig } from "@gen/config";
import { createRedis, type RedisClient } from "@gen/queues";
import { startRedisCluster } from "./support/redis-cluster.ts";
import { waitFor } from "./support/redis-process.ts";
import { SENTINEL_MASTER_NAME, startRedisSentinelGroup } from "./support/redis-sentinel.ts";

/** The ioredis internals each race is placed through. */
type ClusterInternals = RedisClient & { readyCheck(callback: (error?: Error) => void): void };
type SentinelInternals = RedisClient & { connector: { resolve(endpoint: unknown): Promise<unknown>; disconnect(): void }; stream: { destroy(): void } };

const within = <T>(promise: Promise<T>, ms: number): Promise<T | "pending"> =>
  Promise.race([promise, new Promise<"pending">((resolve) => setTimeout(() => resolve("pending"), ms))]);

/** The topology `start` makes, there for the tests of the enclosing describe. */
function topology<T extends { stop(): Promise<void> }>(start: () => Promise<T>): () => T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  }, 120_000);
  afterAll(async () => {
    await started?.stop();
  });
  return () => started!;
}

describe("a Redis Cluster client", () => {
  const cluster = topology(startRedisCluster);

  test("connect() settles although the ready check of that attempt failed (BullMQ awaits it to re-create a blocking connection)", async () => {
    const main = createRedis({ mode: "cluster", nodes: cluster().ports.map((port) => ({ host: "127.0.0.1", port })), password: undefined }, "blocking");
    // BullMQ's blocking connection is a duplicate of the worker's connection.
    const client = main.duplicate() as ClusterInternals;
    try {
      await waitFor(async () => client.status === "ready", 10_000, "cluster client ready");
      // The next attempt's CLUSTER INFO fails once, as when it lands on the master just killed.
      const readyCheck = client.readyCheck.bind(client);
      let failed = false;
      client.readyCheck = (callback: (error?: Error) => void) => {
        if (failed) return readyCheck(callback);
        failed = true;
        callback(new Error("Connection is closed."));
      };
      await new Promise<void>((resolve) => {
        client.once("end", () => resolve());
        client.disconnect();
      });
      expect(
        await within(
          client.connect().then(() => "resolved"),
          15_000,
        ),
      ).toBe("resolved");
      expect(failed).toBe(true);
      expect(await client.ping()).toBe("PONG");
    } finally {
      client.disconnect();
      main.disconnect();
    }
  }, 60_000);
});

describe("a Redis Sentinel client", () => {
  const group = topology(startRedisSentinelGroup);
  const config = (): RedisConfig => ({
    mode: "sentinel",
    sentinels: group().sentinelPorts.map((port) => ({ host: "127.0.0.1", port })),
    name: SENTINEL_MASTER_NAME,
    password: undefined,
    sentinelPassword: undefined,
  });

  test("connects again when its failover detector cancels a reconnect while it asks the sentinels", async () => {
    for (const role of ["request", "blocking"] as const) {
      const client = createRedis(config(), role) as SentinelInternals;
      try {
        await waitFor(async () => client.status === "ready", 10_000, `${role} client ready`);
        const { connector } = client;
        const resolve = connector.resolve.bind(connector);
        let cancelled = false;
        // `+switch-master` arriving while the reconnect asks a sentinel for the primary.
        connector.resolve = async (endpoint: unknown) => {
          const answer = await resolve(endpoint);
          if (!cancelled) {
            cancelled = true;
            connector.disconnect();
          }
          return answer;
        };
        const statuses: string[] = [];
        for (const event of ["end", "ready"]) client.on(event, () => statuses.push(event));
        // The connection drops, as when the primary dies.
        client.stream.destroy();
        await waitFor(async () => statuses.includes("ready"), 15_000, `${role} client ready again`);
        expect(statuses).toEqual(["end", "ready"]);
        expect(await client.ping()).toBe("PONG");
      } finally {
        client.disconnect();
      }
    }
  }, 60_000);

  test("disconnect() by its owner still ends it for good", async () => {
    const client = createRedis(config(), "request");
    await waitFor(async () => client.status === "ready", 10_000, "client ready");
    client.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(client.status).toBe("end");
  }, 30_000);
});
