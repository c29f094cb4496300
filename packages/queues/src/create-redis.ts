import { Cluster, Redis, type ClusterOptions, type RedisOptions } from "ioredis";
import type { RedisConfig } from "@gen/config";
import { reviveEndedClient } from "./revive-ended-client.ts";
import { settleClusterConnect } from "./settle-cluster-connect.ts";

/** A connection in any of the three topologies; BullMQ and every Redis user take either. */
export type RedisClient = Redis | Cluster;

export type RedisRole = "request" | "limiter" | "blocking";

// Reconnection is automatic and never gives up; a few seconds apart at most.
const retryStrategy = (times: number) => Math.min(times * 200, 2000);

/**
 * The one place Redis connections are made (REDIS_URL, a Sentinel group or a cluster, from
 * `config.redis`; a plain URL string is a single node).
 *
 * `request` connections serve HTTP requests: they fail fast while Redis is away (70001) instead of
 * queueing commands. A `limiter` connection is a request connection with ioredis auto-pipelining:
 * the commands issued in one turn of the event loop leave in one write and their replies come back
 * in one read, so the gateway's rate limiter (one script per request) costs Redis and the gateway
 * one round trip per turn instead of one per request. BullMQ's connections never pipeline this
 * way. `blocking` connections belong to BullMQ workers, which must wait forever.
 */
export function createRedis(url: string, role: RedisRole): Redis;
export function createRedis(target: RedisConfig | string, role: RedisRole): RedisClient;
export function createRedis(target: RedisConfig | string, role: RedisRole): RedisClient {
  const config: RedisConfig = typeof target === "string" ? { mode: "single", url: target } : target;
  const redis = config.mode === "cluster" ? createCluster(config, role) : createNode(config, role);
  // Reconnection is automatic; the error event only needs a listener so it is not thrown.
  redis.on("error", () => {});
  return redis;
}

function roleOptions(role: RedisRole): RedisOptions {
  if (role === "blocking") return { maxRetriesPerRequest: null, enableReadyCheck: true };
  const request = { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 2000, connectTimeout: 1000, lazyConnect: false };
  return role === "limiter" ? { ...request, enableAutoPipelining: true } : request;
}

function createNode(config: Exclude<RedisConfig, { mode: "cluster" }>, role: RedisRole): Redis {
  if (config.mode === "single") return new Redis(config.url, { ...roleOptions(role), retryStrategy });
  // A failover can end a Sentinel client for good (see revive-ended-client.ts).
  return reviveEndedClient(
    new Redis({
      ...roleOptions(role),
      sentinels: config.sentinels,
      name: config.name,
      password: config.password,
      sentinelPassword: config.sentinelPassword,
      retryStrategy,
      sentinelRetryStrategy: retryStrategy,
      // Watches the sentinels' +switch-master, so a failover is followed at once rather than when
      // the old primary's connection finally breaks.
      failoverDetector: true,
      // A demoted primary answers writes with READONLY until Sentinel has it drop its clients:
      // reconnect (through the sentinels, to the new primary) and resend.
      reconnectOnError: (error) => (error.message.startsWith("READONLY") ? 2 : false),
    }),
  );
}

function createCluster(config: Extract<RedisConfig, { mode: "cluster" }>, role: RedisRole): Cluster {
  const { enableOfflineQueue, enableAutoPipelining, ...redisOptions } = roleOptions(role);
  const options: ClusterOptions = {
    redisOptions: { ...redisOptions, password: config.password },
    enableOfflineQueue,
    enableAutoPipelining,
    enableReadyCheck: true,
    // Writes and BullMQ's scripts go to the slot's primary; replicas only stand by for failover.
    scaleReads: "master",
    clusterRetryStrategy: retryStrategy,
    // While a primary is being replaced the slot has no owner (CLUSTERDOWN) or moves (MOVED/ASK):
    // wait and retry a little rather than failing the command at once.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 300,
    retryDelayOnTryAgain: 200,
    slotsRefreshTimeout: 2000,
  };
  // A reconnect after a master is killed can leave connect() pending for good (see settle-cluster-connect.ts).
  return settleClusterConnect(new Cluster(config.nodes, options));
}
