import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { cli, freePorts, startRedisProcess, waitFor, type RedisProcess } from "./redis-process.ts";

interface ClusterNode {
  id: string;
  port: number;
  role: "master" | "slave";
  /** For a replica: its master's id. */
  masterId: string | undefined;
  slots: [number, number][];
  failed: boolean;
}

export interface RedisCluster {
  /** REDIS_CLUSTER_NODES. */
  nodesEnv: string;
  ports: number[];
  /** The cluster as the first node that answers sees it. */
  nodes(): Promise<ClusterNode[]>;
  /** The master that serves `key`'s slot, and its replica. */
  owner(key: string): Promise<{ master: ClusterNode; replica: ClusterNode }>;
  process(port: number): RedisProcess;
  stop(): Promise<void>;
}

const NODE_TIMEOUT_MS = 3000;

/**
 * A Redis Cluster of 3 masters with a replica each, on loopback, in a temp directory, without
 * persistence. Nodes announce 127.0.0.1, so ioredis can follow the addresses the cluster gives out.
 */
export async function startRedisCluster(): Promise<RedisCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "gen-redis-cluster-"));
  const ports = await freePorts(6);
  const processes = new Map<number, RedisProcess>();
  const stop = async () => {
    await Promise.all([...processes.values()].map((p) => p.kill()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(
      ports.map(async (port) => {
        const nodeDir = path.join(dir, String(port));
        mkdirSync(nodeDir);
        // prettier-ignore
        const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", nodeDir, "--save", "", "--appendonly", "no", "--daemonize", "no",
          "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", String(NODE_TIMEOUT_MS),
          "--cluster-announce-ip", "127.0.0.1"];
        processes.set(port, await startRedisProcess(port, args));
      }),
    );
    await cli(ports[0]!, "--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-replicas", "1", "--cluster-yes");
    const cluster: RedisCluster = {
      nodesEnv: ports.map((p) => `127.0.0.1:${p}`).join(","),
      ports,
      nodes: () => clusterNodes(ports),
      async owner(key) {
        const slot = Number(await cli(ports[0]!, "CLUSTER", "KEYSLOT", key));
        const nodes = await cluster.nodes();
        const master = nodes.find((n) => n.role === "master" && !n.failed && n.slots.some(([a, b]) => slot >= a && slot <= b));
        const replica = nodes.find((n) => n.role === "slave" && !n.failed && n.masterId === master?.id);
        if (!master || !replica) throw new Error(`slot ${slot}: no live master with a replica`);
        return { master, replica };
      },
      process: (port) => processes.get(port)!,
      stop,
    };
    await waitHealthy(cluster);
    return cluster;
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Every slot served, on every node's view, and each master with a replica in sync. */
export async function waitHealthy(cluster: RedisCluster, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    async () => {
      for (const port of cluster.ports) if (!(await cli(port, "CLUSTER", "INFO")).includes("cluster_state:ok")) return false;
      const nodes = await cluster.nodes();
      const masters = nodes.filter((n) => n.role === "master" && n.slots.length > 0 && !n.failed);
      if (masters.length !== 3 || nodes.some((n) => n.failed)) return false;
      for (const master of masters) {
        const replica = nodes.find((n) => n.masterId === master.id);
        if (!replica || !(await cli(replica.port, "INFO", "replication")).includes("master_link_status:up")) return false;
      }
      return true;
    },
    timeoutMs,
    "cluster healthy (3 masters with a replica in sync)",
  );
}

async function clusterNodes(ports: number[]): Promise<ClusterNode[]> {
  for (const port of ports) {
    const text = await cli(port, "CLUSTER", "NODES").catch(() => "");
    if (!text) continue;
    return text
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [id, address, flags, master, , , , , ...slots] = line.split(" ");
        return {
          id: id!,
          port: Number(/:(\d+)@/.exec(address!)![1]),
          role: flags!.includes("master") ? "master" : "slave",
          masterId: master === "-" ? undefined : master,
          slots: slots
            .filter((s) => !s.startsWith("["))
            .map((s) => (s.includes("-") ? (s.split("-").map(Number) as [number, number]) : [Number(s), Number(s)])),
          failed: flags!.includes("fail"),
        };
      });
  }
  throw new Error("no cluster node answers CLUSTER NODES");
}
