import { Queue, type Telemetry } from "bullmq";
import type { RedisClient } from "./create-redis.ts";
import type { QueueName } from "./queue-names.ts";

/**
 * A producer handle. The connection is shared and owned by the caller. `telemetry` (@gen/tracing's
 * queueTelemetry, undefined when tracing is off) makes each add a span and carries its context in the job.
 */
export function createQueue<T>(name: QueueName, connection: RedisClient, prefix: string, telemetry?: Telemetry): Queue<T> {
  return new Queue<T>(name, telemetry === undefined ? { connection, prefix } : { connection, prefix, telemetry });
}
