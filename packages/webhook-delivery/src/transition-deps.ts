import type { Queue } from "bullmq";
import type { Database } from "@gen/db";
import type { Logger } from "@gen/logger";
import type { Metrics } from "@gen/metrics";
import type { WebhookJobData } from "@gen/queues";
import type { Schedule } from "./delivery-schedule.ts";

/** What the transitions that record an attempt need: the rows, the schedule, and the queue of the next attempt. */
export interface TransitionDeps {
  db: Database;
  config: Schedule;
  logger: Logger;
  webhookQueue: Queue<WebhookJobData>;
  now: () => Date;
  /** `webhook_attempts_total`; absent in processes without metrics. */
  metrics?: Metrics;
}
