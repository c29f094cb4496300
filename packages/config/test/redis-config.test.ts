import { ConfigError, loadConfig } from "../src/index.ts";

describe("Redis topology", () => {
  it("is the single node of REDIS_URL by default", () => {
    expect(loadConfig({}).redis).toEqual({ mode: "single", url: "redis://127.0.0.1:6379" });
    expect(loadConfig({ REDIS_URL: "rediss://cache.example:6380" }).redis).toEqual({ mode: "single", url: "rediss://cache.example:6380" });
  });

  it("is a Sentinel group when REDIS_SENTINELS is set, over REDIS_URL", () => {
    const config = loadConfig({
      REDIS_URL: "redis://ignored:6379",
      REDIS_SENTINELS: "10.0.0.1:26379, sentinel-b:26380,[::1]:26381",
      REDIS_SENTINEL_NAME: "genmaster",
      REDIS_PASSWORD: "pw",
      REDIS_SENTINEL_PASSWORD: "spw",
    });
    expect(config.redis).toEqual({
      mode: "sentinel",
      sentinels: [
        { host: "10.0.0.1", port: 26379 },
        { host: "sentinel-b", port: 26380 },
        { host: "::1", port: 26381 },
      ],
      name: "genmaster",
      password: "pw",
      sentinelPassword: "spw",
    });
  });

  it("is a cluster when REDIS_CLUSTER_NODES is set, with a hash-tagged QUEUE_PREFIX", () => {
    const config = loadConfig({ REDIS_URL: "redis://ignored:6379", REDIS_CLUSTER_NODES: "127.0.0.1:7000,127.0.0.1:7001", QUEUE_PREFIX: "{gen}" });
    expect(config.redis).toEqual({
      mode: "cluster",
      nodes: [
        { host: "127.0.0.1", port: 7000 },
        { host: "127.0.0.1", port: 7001 },
      ],
      password: undefined,
    });
    expect(loadConfig({ REDIS_CLUSTER_NODES: "h:1", QUEUE_PREFIX: "{gen}:staging" }).redis.mode).toBe("cluster");
  });

  it.each(["gen", "gen{x}", "{}", "{gen", "}gen{", ""])("refuses QUEUE_PREFIX %p with a cluster", (prefix) => {
    const load = () => loadConfig({ REDIS_CLUSTER_NODES: "127.0.0.1:7000", QUEUE_PREFIX: prefix || "gen" });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/^QUEUE_PREFIX must be a Redis hash tag such as \{gen\}/);
  });

  it.each([
    [{ REDIS_SENTINELS: "127.0.0.1:26379" }, "REDIS_SENTINEL_NAME"],
    [{ REDIS_SENTINELS: "127.0.0.1", REDIS_SENTINEL_NAME: "m" }, "REDIS_SENTINELS"],
    [{ REDIS_SENTINELS: "127.0.0.1:0", REDIS_SENTINEL_NAME: "m" }, "REDIS_SENTINELS"],
    [{ REDIS_CLUSTER_NODES: "a:1,,b:2", QUEUE_PREFIX: "{gen}" }, "REDIS_CLUSTER_NODES"],
    [{ REDIS_CLUSTER_NODES: "a:99999", QUEUE_PREFIX: "{gen}" }, "REDIS_CLUSTER_NODES"],
    [{ REDIS_CLUSTER_NODES: "a:1", REDIS_SENTINELS: "b:2", REDIS_SENTINEL_NAME: "m", QUEUE_PREFIX: "{gen}" }, "REDIS_SENTINELS"],
    [{ REDIS_URL: "http://127.0.0.1:6379" }, "REDIS_URL"],
    [{ REDIS_URL: "redis://exa mple" }, "REDIS_URL"],
  ])("refuses %p naming %s", (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });
});
