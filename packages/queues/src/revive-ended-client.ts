import type { Redis } from "ioredis";

// How long an ended client waits before connecting again: the retry strategy's ceiling, so a
// Sentinel group still electing a primary is not asked in a tight loop.
const REVIVE_DELAY_MS = 2000;

/**
 * Makes `redis` (and its duplicates, such as BullMQ's blocking connections) connect again when it
 * ended without anybody closing it.
 *
 * ioredis ends a Sentinel client for good ("end", no retry strategy consulted) when one connect
 * attempt is cancelled while it asks the sentinels for the primary. The failover detector does
 * exactly that: after the primary dies the client keeps reconnecting (the sentinels still name the
 * dead primary), and when `+switch-master` arrives in the middle of such an attempt, the detector
 * disconnects the connector, the attempt fails with "Connection is closed" and the client is dead:
 * every later command fails at once (70001 at the gateway, "Connection is closed" in the workers)
 * until the process restarts. How often depends on how long the attempts take, so busy machines
 * see it more. BullMQ revives its own blocking connections from this state (taskforcesh/bullmq#4378);
 * nothing did for the gateway's connection or a worker's shared one. `disconnect()`/`quit()` by the
 * owner still end the client for good.
 */
export function reviveEndedClient(redis: Redis): Redis {
  let closedByOwner = false;
  const { connect, disconnect, quit, duplicate } = redis;
  redis.connect = function (this: Redis, ...args: Parameters<Redis["connect"]>) {
    closedByOwner = false;
    return connect.apply(this, args);
  };
  redis.disconnect = function (this: Redis, reconnect = false) {
    if (!reconnect) closedByOwner = true;
    disconnect.call(this, reconnect);
  };
  redis.quit = function (this: Redis, ...args: unknown[]) {
    closedByOwner = true;
    return (quit as (...a: unknown[]) => Promise<"OK">).apply(this, args);
  } as Redis["quit"];
  redis.duplicate = function (this: Redis, ...args: Parameters<Redis["duplicate"]>) {
    const copy = duplicate.apply(this, args);
    copy.on("error", () => {});
    return reviveEndedClient(copy);
  };
  redis.on("end", () => {
    if (closedByOwner) return;
    setTimeout(() => {
      if (!closedByOwner && redis.status === "end") redis.connect().catch(() => {});
    }, REVIVE_DELAY_MS).unref();
  });
  return redis;
}
