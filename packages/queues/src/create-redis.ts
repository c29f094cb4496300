import { Redis, type RedisOptions } from "ioredis";

/**
 * `request` connections serve HTTP requests: they fail fast while Redis is away (70001) instead of
 * queueing commands. `blocking` connections belong to BullMQ workers, which must wait forever.
 */
export function createRedis(url: string, role: "request" | "blocking"): Redis {
  const options: RedisOptions =
    role === "request"
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 2000, connectTimeout: 1000, lazyConnect: false }
      : { maxRetriesPerRequest: null, enableReadyCheck: true };
  const redis = new Redis(url, { ...options, retryStrategy: (times) => Math.min(times * 200, 2000) });
  // Reconnection is automatic; the error event only needs a listener so it is not thrown.
  redis.on("error", () => {});
  return redis;
}
