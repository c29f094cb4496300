import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { cli, freePorts, startRedisProcess, waitFor, type RedisProcess } from "./redis-process.ts";

export const SENTINEL_MASTER_NAME = "genmaster";

export interface RedisSentinelGroup {
  /** REDIS_SENTINELS. */
  sentinelsEnv: string;
  sentinelPorts: number[];
  /** The two data nodes (initially primary, replica). */
  dataPorts: number[];
  /** The primary's port as every sentinel reports it (throws while they disagree). */
  primaryPort(): Promise<number>;
  process(port: number): RedisProcess;
  stop(): Promise<void>;
}

const DOWN_AFTER_MS = 2000;

/**
 * A primary, its replica and three sentinels (quorum 2) on loopback, in a temp directory, without
 * persistence. The sentinels write their state into their own config files there.
 */
export async function startRedisSentinelGroup(): Promise<RedisSentinelGroup> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "gen-redis-sentinel-"));
  const [primary, replica, ...sentinelPorts] = await freePorts(5);
  const processes = new Map<number, RedisProcess>();
  const stop = async () => {
    await Promise.all([...processes.values()].map((p) => p.kill()));
    rmSync(dir, { recursive: true, force: true });
  };
  const dataArgs = (port: number) => {
    // A replica writes the RDB of a full sync into its directory: one each.
    mkdirSync(path.join(dir, String(port)));
    return ["--port", String(port), "--bind", "127.0.0.1", "--dir", path.join(dir, String(port)), "--save", "", "--appendonly", "no", "--daemonize", "no"];
  };
  try {
    processes.set(primary!, await startRedisProcess(primary!, dataArgs(primary!)));
    processes.set(replica!, await startRedisProcess(replica!, [...dataArgs(replica!), "--replicaof", "127.0.0.1", String(primary)]));
    await waitFor(async () => (await cli(replica!, "INFO", "replication")).includes("master_link_status:up"), 30_000, "replica in sync");
    for (const port of sentinelPorts) {
      const sentinelDir = path.join(dir, `sentinel-${port}`);
      mkdirSync(sentinelDir);
      const conf = path.join(sentinelDir, "sentinel.conf");
      writeFileSync(
        conf,
        [
          `port ${port}`,
          "bind 127.0.0.1",
          `dir ${sentinelDir}`,
          `sentinel monitor ${SENTINEL_MASTER_NAME} 127.0.0.1 ${primary} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_MASTER_NAME} ${DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${SENTINEL_MASTER_NAME} 10000`,
          `sentinel parallel-syncs ${SENTINEL_MASTER_NAME} 1`,
          "",
        ].join("\n"),
      );
      processes.set(port, await startRedisProcess(port, [conf, "--sentinel"]));
    }
    const group: RedisSentinelGroup = {
      sentinelsEnv: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(","),
      sentinelPorts,
      dataPorts: [primary!, replica!],
      async primaryPort() {
        const answers = await Promise.all(sentinelPorts.map((p) => cli(p, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SENTINEL_MASTER_NAME)));
        const ports = new Set(answers.map((a) => Number(a.split("\n")[1])));
        if (ports.size !== 1) throw new Error(`sentinels disagree on the primary: ${answers.join(" | ")}`);
        return [...ports][0]!;
      },
      process: (port) => processes.get(port)!,
      stop,
    };
    await waitSentinelsReady(group);
    return group;
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Every sentinel knows the primary, its replica (in sync) and the two other sentinels. */
export async function waitSentinelsReady(group: RedisSentinelGroup, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    async () => {
      const primary = await group.primaryPort();
      const replica = group.dataPorts.find((p) => p !== primary)!;
      if (!(await cli(primary, "ROLE")).startsWith("master")) return false;
      if (!(await cli(replica, "INFO", "replication")).includes("master_link_status:up")) return false;
      for (const port of group.sentinelPorts) {
        const master = await cli(port, "SENTINEL", "MASTER", SENTINEL_MASTER_NAME);
        const field = (name: string) => new RegExp(`^${name}\\n(.*)$`, "m").exec(master)?.[1];
        if (field("num-slaves") !== "1" || field("num-other-sentinels") !== "2" || field("flags") !== "master") return false;
        const replicas = await cli(port, "SENTINEL", "REPLICAS", SENTINEL_MASTER_NAME);
        if (!replicas.includes(String(replica)) || /s_down|o_down|disconnected/.test(replicas)) return false;
      }
      return true;
    },
    timeoutMs,
    "sentinel group ready (primary, replica in sync, 3 sentinels aware of each other)",
  );
}
