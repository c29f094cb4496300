import type { Queue } from "bullmq";
import type { Config } from "@gen/config";
import type { Database } from "@gen/db";
import type { Logger } from "@gen/logger";
import type { Metrics } from "@gen/metrics";
import type { DeliveryCaps, WebhookJobData } from "@gen/queues";
import type { WebhookSender } from "@gen/webhook-sender";
import type { RenderBody } from "./render-body.ts";

export interface DeliveryDeps {
  config: Config;
  db: Database;
  logger: Logger;
  webhookQueue: Queue<WebhookJobData>;
  sender: WebhookSender;
  render: RenderBody;
  now: () => Date;
  /** `webhook_attempts_total`, `webhook_dispatch_seconds` and the delay counters; absent in processes without metrics. */
  metrics?: Metrics;
  /** Fleet-wide caps per receiver host and per customer; absent: no cap (unit tests of the schedule). */
  caps?: DeliveryCaps;
}
