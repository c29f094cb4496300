import { ConfigError } from "./config-error.ts";
import type { RedisConfig, RedisNode } from "./config.ts";

type Env = Record<string, string | undefined>;

// `{tag}` first: Redis hashes only the tag, so every key under the prefix (BullMQ's queues, whose
// scripts touch many keys at once, and our own scripts and MULTIs) lands in one cluster slot.
const HASH_TAG_PREFIX = /^\{[^{}]+\}/;

/**
 * REDIS_CLUSTER_NODES, else REDIS_SENTINELS (+ REDIS_SENTINEL_NAME), else REDIS_URL. Setting both
 * of the first two is refused: which one the operator meant cannot be guessed.
 */
export function redisConfig(env: Env, url: string, queuePrefix: string): RedisConfig {
  const clusterNodes = nodes(env, "REDIS_CLUSTER_NODES");
  const sentinels = nodes(env, "REDIS_SENTINELS");
  const password = env.REDIS_PASSWORD || undefined;
  if (clusterNodes && sentinels) throw new ConfigError("REDIS_CLUSTER_NODES and REDIS_SENTINELS are both set; set one of them");
  if (clusterNodes) {
    if (!HASH_TAG_PREFIX.test(queuePrefix)) {
      throw new ConfigError(
        `QUEUE_PREFIX must be a Redis hash tag such as {gen} when REDIS_CLUSTER_NODES is set (all keys must share one cluster slot), got "${queuePrefix}"`,
      );
    }
    return { mode: "cluster", nodes: clusterNodes, password };
  }
  if (sentinels) {
    const name = env.REDIS_SENTINEL_NAME ?? "";
    if (name === "") throw new ConfigError("REDIS_SENTINEL_NAME (the master group name) is required when REDIS_SENTINELS is set");
    return { mode: "sentinel", sentinels, name, password, sentinelPassword: env.REDIS_SENTINEL_PASSWORD || undefined };
  }
  if (!/^rediss?:\/\//.test(url) || !URL.canParse(url)) throw new ConfigError(`REDIS_URL must be a redis:// or rediss:// URL, got "${url}"`);
  return { mode: "single", url };
}

/** `host:port,host:port`; IPv6 as `[::1]:7000`. Undefined when the variable is unset or empty. */
function nodes(env: Env, name: string): RedisNode[] | undefined {
  const raw = (env[name] ?? "").trim();
  if (raw === "") return undefined;
  return raw.split(",").map((item) => {
    const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(item.trim());
    const port = Number(match?.[3]);
    if (!match || port < 1 || port > 65535) throw new ConfigError(`${name} must be a comma-separated list of host:port, got "${item.trim()}"`);
    return { host: (match[1] ?? match[2])!, port };
  });
}
