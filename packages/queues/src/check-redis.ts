import type { RedisConfig } from "@gen/config";
import type { RedisClient } from "./create-redis.ts";

/** Start-up check: throws an Error whose message is one line an operator can act on. */
export async function checkRedis(redis: RedisClient, target: RedisConfig | string, timeoutMs = 3000): Promise<void> {
  const where = describeRedis(typeof target === "string" ? { mode: "single", url: target } : target);
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
    throw new Error(`Redis does not answer at ${where}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  } finally {
    clearTimeout(timer);
    redis.off("error", onError);
    if (onReady) redis.off("ready", onReady);
  }
}

/** Where the operator pointed us, and through which variable; never a password. */
function describeRedis(config: RedisConfig): string {
  const list = (nodes: { host: string; port: number }[]) =>
    nodes.map((n) => (n.host.includes(":") ? `[${n.host}]:${n.port}` : `${n.host}:${n.port}`)).join(",");
  if (config.mode === "cluster") return `cluster ${list(config.nodes)} (REDIS_CLUSTER_NODES)`;
  if (config.mode === "sentinel") return `master "${config.name}" of sentinels ${list(config.sentinels)} (REDIS_SENTINELS)`;
  try {
    const parsed = new URL(config.url);
    return `${parsed.hostname}:${parsed.port || "6379"} (REDIS_URL)`;
  } catch {
    return "an invalid URL (REDIS_URL)";
  }
}
