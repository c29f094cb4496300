import { createRedis } from "@gen/queues";

type Redis = ReturnType<typeof createRedis>;

/**
 * Removes every key matching `pattern` with SCAN + UNLINK: one prefix's keys on the shared Redis
 * (never FLUSHDB there: other runs use it at the same time). Returns how many.
 */
export async function deleteKeys(redis: Redis, pattern: string): Promise<number> {
  let cursor = "0";
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    if (keys.length > 0) deleted += await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== "0");
  return deleted;
}

/** Every key under `prefix` (`<prefix>:...`, as QUEUE_PREFIX names them). */
export function deleteKeysUnder(redis: Redis, prefix: string): Promise<number> {
  return deleteKeys(redis, `${prefix}:*`);
}

/**
 * `deleteKeysUnder` on a connection of its own to `url`, given at most `timeoutMs`: a test's clean-up
 * must not hang on a Redis that a failure test took away. Errors are the caller's to ignore or not.
 */
export async function deletePrefixAt(url: string, prefix: string, timeoutMs = 5000): Promise<number> {
  const redis = createRedis(url, "request");
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      (async () => {
        if (redis.status !== "ready") await new Promise((resolve, reject) => redis.once("ready", resolve).once("error", reject));
        return deleteKeysUnder(redis, prefix);
      })(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`deleting ${prefix}:* at ${url} took over ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    redis.disconnect();
  }
}

/** Keys matching `pattern`, counted per prefix (the part before the first `:`). */
export async function countKeysPerPrefix(redis: Redis, pattern: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    for (const key of keys) {
      const prefix = key.split(":")[0]!;
      counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
    }
    cursor = next;
  } while (cursor !== "0");
  return counts;
}
