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
  let lastError: Error | undefined;
  const onError = (error: Error) => {
    lastError = error;
  };
  let onReady: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  redis.on("error", onError);
  try {
    // A fail-fast (`request`) connection refuses commands until it is connected: right after
    // start-up that is not "Redis is down", so wait for the connection first, within the bound.
    const ready = redis.status === "ready" ? Promise.resolve() : new Promise<void>((resolve) => redis.once("ready", (onReady = resolve)));
    await Promise.race([
      ready.then(() => redis.ping()),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms${lastError ? ` (${lastError.message})` : ""}`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    throw new Error(`Redis does not answer at ${where} (REDIS_URL): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  } finally {
    clearTimeout(timer);
    redis.off("error", onError);
    if (onReady) redis.off("ready", onReady);
  }
}
