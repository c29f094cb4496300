import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { QueueName } from "./queue-names.ts";

/** A producer handle. The connection is shared and owned by the caller. */
export function createQueue<T>(name: QueueName, connection: Redis, prefix: string): Queue<T> {
  return new Queue<T>(name, { connection, prefix });
}
