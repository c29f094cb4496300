import { Queue } from "bullmq";
import type { RedisClient } from "./create-redis.ts";
import type { QueueName } from "./queue-names.ts";

/** A producer handle. The connection is shared and owned by the caller. */
export function createQueue<T>(name: QueueName, connection: RedisClient, prefix: string): Queue<T> {
  return new Queue<T>(name, { connection, prefix });
}
