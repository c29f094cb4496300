import type { Redis } from "ioredis";

/** Start-up check: throws an Error whose message is one line an operator can act on. */
export async function checkRedis(redis: Redis, url: string, timeoutMs = 3000): Promise<void> {
  let where = "an invalid URL";
  try {
    const parsed = new URL(url);
    where = `${parsed.hostname}:${parsed.port || "6379"}`;
  } catch {
    /* keep the generic description */
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    throw new Error(`Redis does not answer at ${where} (REDIS_URL): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}
